package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/evaluate"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
	"github.com/ihope-ope/ihope/value"
)

// estimate --data on a glob of shards gives, estimator by estimator, the
// estimates and diagnostics of estimate on the one file of their rows.
func TestEstimateStreamEqualsOneFile(t *testing.T) {
	dir := t.TempDir()
	shards := filepath.Join(dir, "shards")
	os.Mkdir(shards, 0o755)
	var all strings.Builder
	for i := range 3 {
		path := filepath.Join(shards, fmt.Sprintf("part-%d.csv", i))
		if _, errOut, code := run(t, "sample", "--out", path, "-n", "15", "-T", "50", "--seed", fmt.Sprint(i+1),
			"--mix", "0.5", "--target-probs", "--id-prefix", fmt.Sprintf("s%d-", i)); code != ExitOK {
			t.Fatalf("sample: %s", errOut)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		head, rows, _ := strings.Cut(string(b), "\n")
		if i == 0 {
			all.WriteString(head + "\n")
		}
		all.WriteString(rows)
	}
	whole := filepath.Join(dir, "whole.csv")
	if err := os.WriteFile(whole, []byte(all.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	const names = "naive,is-trajectory,wis-trajectory,is-stepwise,wis-stepwise,model-based,fqe,bch-tabular,mwl,mql,dualdice"
	estimate := func(args ...string) evaluate.Report {
		t.Helper()
		return *estimateJSON(t, args...)
	}
	for _, gamma := range []string{"1", "0.9"} {
		want := estimate("--data", whole, "--bootstrap", "0", "--estimators", names, "--gamma", gamma)
		got := estimate("--data", filepath.Join(shards, "*.csv"), "--bootstrap", "0", "--estimators", names, "--gamma", gamma)
		if len(got.Estimates) != len(want.Estimates) {
			t.Fatalf("%d rows, want %d", len(got.Estimates), len(want.Estimates))
		}
		for k, w := range want.Estimates {
			g := got.Estimates[k]
			if g.Estimator != w.Estimator || g.Estimate == nil || w.Estimate == nil ||
				math.Abs(*g.Estimate-*w.Estimate) > 1e-12*math.Abs(*w.Estimate) ||
				math.Abs(g.ESS-w.ESS) > 1e-9*w.ESS || g.Units != w.Units || g.Estimand != w.Estimand || g.Note != w.Note {
				t.Errorf("gamma %s: stream %+v\none file %+v", gamma, g, w)
			}
			if w.Units == 0 && (g.MaxWeightShare != nil || w.MaxWeightShare != nil) {
				t.Errorf("%s weighs nothing: max_weight_share %v streamed, %v in memory", g.Estimator, g.MaxWeightShare, w.MaxWeightShare)
			}
		}
		// The count models' imputation is warned about alike (Taxi's
		// sparse logs leave many pairs the target takes unlogged), for
		// the minimax estimators' tabular solves too.
		const imputed = "in its count model"
		if g, w := warningsWith(&got, imputed), warningsWith(&want, imputed); len(w) != 5 || !slices.Equal(g, w) {
			t.Errorf("gamma %s: count-model warnings streamed %q, in memory %q (want model-based's, fqe's, and mwl's, mql's and dualdice's, whose exact solves impute alike)", gamma, g, w)
		}
		gd, wd := got.Data, want.Data
		gd.File, wd.File = "", ""
		// The Markov test permutes the whole log's steps: one file only.
		if wd.MarkovP == nil {
			t.Errorf("gamma %s: one file without markov_p", gamma)
		}
		wd.MarkovP = nil
		gj, _ := json.Marshal(gd)
		wj, _ := json.Marshal(wd)
		if string(gj) != string(wj) {
			t.Errorf("data summary\n%+v\none file\n%+v", got.Data, want.Data)
		}
	}
	// The default set: the streamable estimators of estimate's default
	// set of the horizon value, with Poisson bootstrap intervals, and a
	// line naming those of the long-run value.
	rep := estimate("--data", shards, "--bootstrap", "30")
	var got []string
	for _, r := range rep.Estimates {
		got = append(got, r.Estimator)
		if r.CILow == nil || !(*r.CILow <= *r.Estimate+0.05 && *r.Estimate-0.05 <= *r.CIHigh) {
			t.Errorf("%s: interval %v %v around %v", r.Estimator, r.CILow, r.CIHigh, *r.Estimate)
		}
	}
	if strings.Join(got, ",") != "naive,wis-trajectory,wis-stepwise,model-based,fqe" || rep.Bootstrap == nil || rep.Bootstrap.Method != "episodes (Poisson)" ||
		!strings.HasPrefix(rep.Data.NotRun, "bch-tabular, mwl, mql, dualdice estimate the long-run value") {
		t.Errorf("default rows %v, bootstrap %+v, not run %q", got, rep.Bootstrap, rep.Data.NotRun)
	}
	rep = estimate("--data", shards, "--bootstrap", "0", "--estimand", "long-run")
	got = nil
	for _, r := range rep.Estimates {
		got = append(got, r.Estimator)
	}
	if strings.Join(got, ",") != "model-based,fqe,bch-tabular,mwl,mql,dualdice" {
		t.Errorf("default rows of the long-run value %v", got)
	}
	// With the target's table from a file instead of the columns.
	policyFile := filepath.Join(dir, "pi19.csv")
	pi19, _ := taxi.Policy("pi19")
	var buf bytes.Buffer
	if err := pi19.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policyFile, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	a := estimate("--data", shards, "--bootstrap", "0", "--estimators", "model-based", "--target-policy", policyFile)
	b := estimate("--data", whole, "--bootstrap", "0", "--estimators", "model-based", "--target-policy", policyFile)
	if *a.Estimates[0].Estimate != *b.Estimates[0].Estimate {
		t.Errorf("--target-policy: stream %v, one file %v", *a.Estimates[0].Estimate, *b.Estimates[0].Estimate)
	}
	// The rows and the report name the policy as on one file.
	if a.Estimates[0].Policy != "pi19" || b.Estimates[0].Policy != "pi19" || len(a.Policies) != 1 ||
		a.Policies[0].Name != b.Policies[0].Name || a.Policies[0].File != b.Policies[0].File {
		t.Errorf("--target-policy: stream names policy %q %+v, one file %q %+v", a.Estimates[0].Policy, a.Policies, b.Estimates[0].Policy, b.Policies)
	}
	// A file that contradicts the shards' target_prob is refused, as on
	// one file (the stream used it beside the columns, mixing two
	// targets).
	pi17File := filepath.Join(dir, "pi17.csv")
	pi17, _ := taxi.Policy("pi17")
	buf.Reset()
	if err := pi17.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pi17File, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, data := range []string{shards, whole} {
		_, errOut, code := run(t, "estimate", "--data", data, "--bootstrap", "0", "--estimators", "wis-stepwise,fqe", "--target-policy", pi17File)
		if code == ExitOK || !strings.Contains(errOut, "the target policy file says") {
			t.Errorf("%s with a contradicting policy file: exit %d, %s", data, code, errOut)
		}
	}
	// What cannot stream is refused, saying why.
	for _, c := range []struct{ args, want string }{
		{"--estimators dr", "dr cannot stream"},
		{"--estimators bch-neural --reservoir 0", "--reservoir 0"},
	} {
		_, errOut, code := run(t, append([]string{"estimate", "--data", shards}, strings.Fields(c.args)...)...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, %s", c.args, code, errOut)
		}
	}
	// The neural forms stream (TestEstimateStreamNeuralForms) on real
	// states; on these discrete ones they fail in their row, as on one
	// file.
	for _, args := range [][]string{{"mwl", "--ratio-model", "neural"}, {"mql", "--value-model", "neural"}} {
		rep := estimate(append([]string{"--data", shards, "--bootstrap", "0", "--estimators"}, args...)...)
		if r := rep.Estimates[0]; r.Estimate != nil || !strings.Contains(r.Error, "the neural form needs real-valued states") {
			t.Errorf("%v on discrete states: %+v", args, r)
		}
	}
	// The long-run estimand: the tabular learners solve the count model's
	// stationary value, as on one file.
	for _, gamma := range []string{"1", "0.9"} {
		const lr = "model-based,fqe"
		want := estimate("--data", whole, "--bootstrap", "0", "--estimators", lr, "--gamma", gamma, "--estimand", "long-run")
		got := estimate("--data", shards, "--bootstrap", "0", "--estimators", lr, "--gamma", gamma, "--estimand", "long-run")
		for k, w := range want.Estimates {
			g := got.Estimates[k]
			if g.Estimate == nil || w.Estimate == nil || math.Abs(*g.Estimate-*w.Estimate) > 1e-12*math.Abs(*w.Estimate) || g.Estimand != w.Estimand {
				t.Errorf("long-run gamma %s: stream %+v\none file %+v", gamma, g, w)
			}
		}
	}
	_, errOut, code := run(t, "estimate", "--data", filepath.Join(dir, "none-*.csv"))
	if code == ExitOK || !strings.Contains(errOut, "no such file") {
		t.Errorf("empty glob: exit %d, %s", code, errOut)
	}
}

// bch-kernel streams in two passes over shards of real states (the
// second pass is announced on a terminal) and gives the estimate of one
// file up to the order of summation.
func TestEstimateStreamKernel(t *testing.T) {
	p := lineargauss.Problem1D()
	d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(4, 0)), p.System, p.Behavior, p.Target, 24, 80)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.csv")
	if err := logio.WriteFile(whole, d); err != nil {
		t.Fatal(err)
	}
	writeShards(t, dir, d, 3)
	estimate := func(args ...string) evaluate.Report {
		t.Helper()
		return *estimateJSON(t, append([]string{"--bootstrap", "0", "--estimators", "bch-kernel,wis-stepwise"}, args...)...)
	}
	for _, gamma := range []string{"1", "0.99"} {
		want := estimate("--data", whole, "--gamma", gamma)
		got := estimate("--data", filepath.Join(dir, "part-*.parquet"), "--gamma", gamma)
		for k, w := range want.Estimates {
			g := got.Estimates[k]
			if g.Estimator != w.Estimator || g.Estimate == nil || w.Estimate == nil ||
				math.Abs(*g.Estimate-*w.Estimate) > 1e-12*math.Abs(*w.Estimate) ||
				math.Abs(g.ESS-w.ESS) > 1e-9*w.ESS || g.Units != w.Units || g.Model != w.Model {
				t.Errorf("gamma %s: stream %+v\none file %+v", gamma, g, w)
			}
		}
	}
}

// The neural forms of fqe and mql (--value-model neural), mwl and
// dualdice (--ratio-model neural) stream in two passes over shards of
// real states: trained on the first pass's sample of whole episodes,
// evaluated on every step in the second. With --reservoir above the
// log's steps the sample is every episode, in the order of their keys
// (ope.ReservoirEpisodes), so the one file written in that order trains
// the same networks, and estimate on it gives, estimator by estimator,
// the stream's estimate to 1e-12 (the sums in another order).
func TestEstimateStreamNeuralForms(t *testing.T) {
	testNeural.value = value.Neural{MaxIter: 300, BatchSize: 64, EvalEvery: 100}
	testNeural.minimax = value.MinimaxNeural{MaxIter: 60, BatchSize: 128, EvalEvery: 20}
	defer func() { testNeural.value, testNeural.minimax = value.Neural{}, value.MinimaxNeural{} }()
	sys, target, behavior := lineargauss.DiscreteProblem()
	d, err := sys.Sample(rand.New(rand.NewPCG(6, 0)), behavior, target, 12, 40)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeShards(t, dir, d, 3)
	const trainSeed = 3
	whole := filepath.Join(t.TempDir(), "whole.csv")
	if err := logio.WriteFile(whole, d.Subset(ope.ReservoirEpisodes(d, trainSeed, d.NumSteps()))); err != nil {
		t.Fatal(err)
	}
	estimate := func(args ...string) evaluate.Report {
		t.Helper()
		return *estimateJSON(t, append([]string{"--train-seed", fmt.Sprint(trainSeed), "--reservoir", "100000"}, args...)...)
	}
	// fqe's network is stationary: under the horizon it is refused for
	// that reason, not as something that cannot stream.
	_, errOut, code := run(t, "estimate", "--data", filepath.Join(dir, "part-*.parquet"), "--estimators", "fqe", "--value-model", "neural", "--gamma", "0.95", "--bootstrap", "0")
	if code == ExitOK || !strings.Contains(errOut, "the value model is stationary") || strings.Contains(errOut, "one file") {
		t.Errorf("fqe --value-model neural under horizon over shards: exit %d, %s", code, errOut)
	}
	// On one file its row fails with the reason, and with only it named
	// the exit status says nothing was estimated; the report is written.
	out, errOut, code := run(t, "estimate", "--json", "--data", whole, "--estimators", "fqe", "--value-model", "neural", "--gamma", "0.95", "--bootstrap", "0")
	if code != ExitError || !strings.Contains(errOut, "no estimate: fqe: the value model is stationary") || !strings.Contains(out, `"estimate":null`) {
		t.Errorf("fqe --value-model neural under horizon on one file: exit %d, stderr %s, stdout %s", code, errOut, out)
	}
	for _, c := range []struct{ estimators, model, gamma string }{
		{"fqe,mql", "--value-model", "0.95 --estimand long-run"},
		{"fqe", "--value-model", "0.9 --estimand long-run"},
		{"mwl,dualdice", "--ratio-model", "1"},
	} {
		args := append([]string{"--bootstrap", "0", "--estimators", c.estimators, c.model, "neural", "--gamma"}, strings.Fields(c.gamma)...)
		want := estimate(append([]string{"--data", whole}, args...)...)
		got := estimate(append([]string{"--data", filepath.Join(dir, "part-*.parquet")}, args...)...)
		if len(got.Estimates) != len(want.Estimates) {
			t.Fatalf("%s: %d rows, want %d", c.estimators, len(got.Estimates), len(want.Estimates))
		}
		for k, w := range want.Estimates {
			g := got.Estimates[k]
			if g.Estimator != w.Estimator || g.Estimate == nil || w.Estimate == nil ||
				math.Abs(*g.Estimate-*w.Estimate) > 1e-12*math.Abs(*w.Estimate) || g.Model != "neural" || g.Model != w.Model ||
				math.Abs(g.ESS-w.ESS) > 1e-9*w.ESS || g.Units != w.Units || g.Estimand != w.Estimand {
				t.Errorf("gamma %s: stream %+v\none file %+v", c.gamma, g, w)
			}
			t.Logf("%s gamma %s: stream %v, one file %v", g.Estimator, c.gamma, *g.Estimate, *w.Estimate)
		}
	}
}

// mwl, mql and dualdice stream in their kernel form over shards of real
// states (two passes) and give the estimates of one file to 1e-12 (the
// same sums, added in the same order); on such shards the default set
// holds them.
func TestEstimateStreamMinimaxKernel(t *testing.T) {
	sys, target, behavior := lineargauss.DiscreteProblem()
	d, err := sys.Sample(rand.New(rand.NewPCG(4, 0)), behavior, target, 24, 80)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.csv")
	if err := logio.WriteFile(whole, d); err != nil {
		t.Fatal(err)
	}
	shards := filepath.Join(dir, "shards")
	os.Mkdir(shards, 0o755)
	writeShards(t, shards, d, 3)
	estimate := func(args ...string) evaluate.Report {
		t.Helper()
		return *estimateJSON(t, args...)
	}
	const names = "mwl,mql,dualdice"
	for _, gamma := range []string{"1", "0.9"} {
		want := estimate("--data", whole, "--gamma", gamma, "--bootstrap", "0", "--estimators", names)
		got := estimate("--data", filepath.Join(shards, "part-*.parquet"), "--gamma", gamma, "--bootstrap", "0", "--estimators", names)
		if len(got.Estimates) != 3 {
			t.Fatalf("%d rows", len(got.Estimates))
		}
		for k, w := range want.Estimates {
			g := got.Estimates[k]
			if g.Estimator != w.Estimator || g.Estimate == nil || w.Estimate == nil ||
				math.Abs(*g.Estimate-*w.Estimate) > 1e-12*math.Abs(*w.Estimate) || g.Model != "kernel" || w.Model != "kernel" ||
				g.Units != w.Units || g.Estimand != w.Estimand {
				t.Errorf("gamma %s: stream %+v\none file %+v", gamma, g, w)
			}
			// The stream does not keep the largest weight's share: null,
			// not a made-up 0.
			if g.Estimator != "mql" && (g.MaxWeightShare != nil || w.MaxWeightShare == nil) {
				t.Errorf("%s: max_weight_share %v streamed, %v in memory; want null and a number", g.Estimator, g.MaxWeightShare, w.MaxWeightShare)
			}
		}
	}
	rep := estimate("--data", shards, "--bootstrap", "10", "--estimators", names)
	for _, r := range rep.Estimates {
		if r.Estimate == nil || r.CILow == nil || !(*r.CILow <= *r.Estimate && *r.Estimate <= *r.CIHigh) {
			t.Errorf("%s: interval %v %v around %v (%s)", r.Estimator, r.CILow, r.CIHigh, r.Estimate, r.Error)
		}
	}
	// The default set on real states with the target's columns.
	st, err := evaluate.NewStreamStats(d, evaluate.StreamOptions{Gamma: 1, Estimand: "long-run"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(st.Config().Estimators, ","); !strings.Contains(got, "mwl,mql,dualdice") {
		t.Errorf("default set %s", got)
	}
}

// writeShards writes d's episodes to k Parquet shards part-0 ... part-(k-1)
// in dir, in order, the same number in each (d's episodes a multiple of k).
func writeShards(t *testing.T, dir string, d *dataset.Dataset, k int) {
	t.Helper()
	per := d.NumEpisodes() / k
	for i := range k {
		var idx []int
		for e := i * per; e < (i+1)*per; e++ {
			idx = append(idx, e)
		}
		if err := logio.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i)), d.Subset(idx)); err != nil {
			t.Fatal(err)
		}
	}
}
