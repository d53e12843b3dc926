package stream_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/internal/testsets"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
	"github.com/ihope-ope/ihope/stream"
	"github.com/ihope-ope/ihope/value"
)

func taxiLog(t testing.TB, seed uint64, n, T int) *dataset.Dataset {
	t.Helper()
	target, _ := taxi.Policy("pi19")
	behavior, _ := taxi.Policy("pi18")
	d, err := rollout.Sample(rand.New(rand.NewPCG(seed, 0)), sim.NewSampler(taxi.New()), behavior, target, n, T)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SetTargetPolicy(target); err != nil { // target_prob_k: model-based applies
		t.Fatal(err)
	}
	return d
}

// splitCSV writes d as one CSV file and as k shards cut at rows that fall
// inside episodes (so episodes continue from shard to shard), and
// returns the file and the shards' glob.
func splitCSV(t testing.TB, d *dataset.Dataset, k int) (string, string) {
	t.Helper()
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.csv")
	if err := logio.WriteFile(whole, d); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	header, rows := lines[0], lines[1:]
	sub := filepath.Join(dir, "shards")
	os.Mkdir(sub, 0o755)
	for i := range k {
		lo, hi := i*len(rows)/k+7*i%13, (i+1)*len(rows)/k+7*(i+1)%13
		if i == k-1 {
			hi = len(rows)
		}
		body := header + strings.Join(rows[lo:hi], "")
		if !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("part-%03d.csv", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return whole, filepath.Join(sub, "part-*.csv")
}

func run(t testing.TB, glob string, cfg stream.Config) *stream.Results {
	t.Helper()
	files, err := stream.Files(glob)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := stream.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := stream.Reader{Files: files}
	if stats.FirstPass() {
		if err := r.Each(stats.AddFirst); err != nil {
			t.Fatal(err)
		}
		stats.EndFirst()
	}
	if err := r.Each(stats.Add); err != nil {
		t.Fatal(err)
	}
	res, err := stats.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// applicable returns the streamable estimators that apply to d (its
// target_prob_k columns give the target's table).
func applicable(t testing.TB, d *dataset.Dataset) []string {
	t.Helper()
	var o ope.Options
	if d.Discrete() && d.HasTargetProbs() {
		table, err := value.TableFromData(d)
		if err != nil {
			t.Fatal(err)
		}
		o.Target = table
	}
	var out []string
	for _, name := range stream.Streamable() {
		if stream.Applies(name, d, o) == nil {
			out = append(out, name)
		}
	}
	return out
}

func rel(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(a-b) / math.Max(math.Abs(a), math.Abs(b))
}

// Streaming over 10 shards, episodes running across them, equals the
// in-memory estimators on the concatenated log to 1e-12 under both
// estimands, and the Poisson bootstrap's intervals equal ope.Bootstrap's
// with Poisson set. The everyday run streams 30 episodes, IHOPE_STAT=1
// 80.
func TestStreamEqualsInMemory(t *testing.T) {
	episodes := 30
	if testsets.Stat() {
		episodes = 80
	}
	d := taxiLog(t, 5, episodes, 150)
	whole, glob := splitCSV(t, d, 10)
	full, err := logio.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	names := applicable(t, full)
	if len(names) < 11 {
		t.Fatalf("streamable estimators %v", names)
	}
	for _, c := range []struct {
		est   ope.Estimand
		gamma float64
	}{{ope.Horizon, 1}, {ope.Horizon, 0.95}, {ope.LongRun, 1}, {ope.LongRun, 0.95}} {
		gamma, names := c.gamma, names
		if c.est == ope.LongRun {
			names = []string{"model-based", "fqe"} // the others read the estimand not
		}
		const B, seed = 120, 7
		res := run(t, glob, stream.Config{Estimators: names, Gamma: gamma, Resamples: B, Seed: seed, Options: ope.Options{Estimand: c.est}})
		if got, want := res.Summary, dataset.Summarize(full); got != want && !(math.IsNaN(want.MaxLogRatio) && math.IsNaN(got.MaxLogRatio)) {
			t.Errorf("gamma %v: summary\n%+v\nin memory\n%+v", gamma, got, want)
		}
		table, err := value.TableFromData(full)
		if err != nil {
			t.Fatal(err)
		}
		ests, err := ope.New(names, ope.Options{Target: table, Estimand: c.est})
		if err != nil {
			t.Fatal(err)
		}
		bs := ope.Bootstrap{Resamples: B, Seed: seed, Poisson: true, Workers: 2}
		ivs, err := bs.Run(full, gamma, ests)
		if err != nil {
			t.Fatal(err)
		}
		for k, est := range ests {
			want, err := est.Estimate(full, gamma)
			got := res.Estimates[k]
			if err != nil || got.Err != nil {
				t.Errorf("%s gamma %v %s: stream error %v, in memory %v", c.est, gamma, est.Name(), got.Err, err)
				continue
			}
			if r := rel(got.Result.Value, want.Value); r > 1e-12 {
				t.Errorf("%s gamma %v %s: stream %v, in memory %v (relative %.2g)", c.est, gamma, est.Name(), got.Result.Value, want.Value, r)
			}
			if w := want.Weights; w != nil && math.Abs(got.Weights.ESS-ope.KishESS(w)) > 1e-9*ope.KishESS(w) {
				t.Errorf("%s gamma %v %s: ESS %v, in memory %v", c.est, gamma, est.Name(), got.Weights.ESS, ope.KishESS(w))
			}
			iv := got.Interval
			if iv == nil || iv.Method != ivs[k].Method || iv.Failures != ivs[k].Failures ||
				rel(iv.Low, ivs[k].Low) > 1e-12 || rel(iv.High, ivs[k].High) > 1e-12 {
				t.Errorf("%s gamma %v %s: stream interval %+v, in-memory Poisson bootstrap [%v, %v] %s", c.est, gamma, est.Name(), iv, ivs[k].Low, ivs[k].High, ivs[k].Method)
			}
		}
	}
}

// Parquet shards of whole episodes, merged out of order from encoded
// partial statistics as workers of a cluster would, give the same
// estimates up to summation order.
func TestStreamMergeParquet(t *testing.T) {
	d := taxiLog(t, 6, 40, 100)
	dir := t.TempDir()
	for i := range 4 {
		var idx []int
		for e := i * 10; e < (i+1)*10; e++ {
			idx = append(idx, e)
		}
		if err := logio.WriteFile(filepath.Join(dir, fmt.Sprintf("s%d.parquet", i)), d.Subset(idx)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := stream.Config{Estimators: applicable(t, d), Gamma: 0.99, Resamples: 20, Seed: 3, Notes: []string{"x: not run: a note"}}
	want := run(t, dir, cfg)
	files, _ := stream.Files(dir)
	var total *stream.Stats
	for _, i := range []int{2, 0, 3, 1} {
		s, _ := stream.New(cfg)
		part, err := logio.ReadFile(files[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Add(part, 0, part.NumEpisodes()); err != nil {
			t.Fatal(err)
		}
		// Through the wire, binary and JSON in turn.
		var b []byte
		back := &stream.Stats{}
		if i%2 == 0 {
			b, err = s.MarshalBinary()
			if err == nil {
				err = back.UnmarshalBinary(b)
			}
		} else {
			b, err = s.MarshalJSON()
			if err == nil {
				err = back.UnmarshalJSON(b)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if total == nil {
			total = back
		} else if err := total.Merge(back); err != nil {
			t.Fatal(err)
		}
	}
	got, err := total.Finish()
	if err != nil {
		t.Fatal(err)
	}
	for k, g := range got.Estimates {
		w := want.Estimates[k]
		if g.Err != nil || w.Err != nil || rel(g.Result.Value, w.Result.Value) > 1e-9 ||
			rel(g.Interval.Low, w.Interval.Low) > 1e-9 || rel(g.Interval.High, w.Interval.High) > 1e-9 {
			t.Errorf("%s: merged %v %+v (%v), streamed %v %+v (%v)", g.Name, g.Result.Value, g.Interval, g.Err, w.Result.Value, w.Interval, w.Err)
		}
	}
	// The caller's notes travel with the statistics and come first.
	if len(got.Warnings) == 0 || got.Warnings[0] != "x: not run: a note" {
		t.Errorf("merged warnings %q, want the config's note first", got.Warnings)
	}
	// The summary survives the encoding too: its reward range (Taxi's
	// rewards, -10 to 20, do not include the zero a lost field reads
	// back as), lengths and counts.
	ws := dataset.Summarize(d)
	gs := got.Summary
	if gs.Steps != ws.Steps || gs.Episodes != ws.Episodes || gs.MinReward != ws.MinReward || gs.MaxReward != ws.MaxReward ||
		gs.MinLength != ws.MinLength || gs.MaxLength != ws.MaxLength || gs.MinCutOff != ws.MinCutOff ||
		gs.StatesSeen != ws.StatesSeen || gs.LargeRatio != ws.LargeRatio || gs.MaxLogRatio != ws.MaxLogRatio ||
		gs.UnloggedStates != ws.UnloggedStates || !(ws.UnloggedTarget > 0) || rel(gs.UnloggedTarget, ws.UnloggedTarget) > 1e-12 {
		t.Errorf("merged summary %+v, want %+v", gs, ws)
	}
}

// Bad shards are refused naming the file, the row and the column.
func TestStreamRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const head = "episode,t,state,action,reward,behavior_prob,target_prob\n"
	cases := []struct {
		name   string
		shards []string
		want   string
	}{
		{"reappears", []string{head + "a,0,1,0,1,0.5,0.5\nb,0,1,0,1,0.5,0.5\n", head + "c,0,1,0,1,0.5,0.5\na,0,2,0,1,0.5,0.5\n"},
			`1.csv: row 3, column "episode": episode "a" appeared already in`},
		{"wrong-t", []string{head + "a,0,1,0,1,0.5,0.5\nb,0,1,0,1,0.5,0.5\n", head + "b,2,1,0,1,0.5,0.5\n"},
			`1.csv: row 2, column "t": episode "b" continues from the previous shard`},
		{"starts-late", []string{head + "a,0,1,0,1,0.5,0.5\n", head + "c,3,1,0,1,0.5,0.5\n"},
			`1.csv: row 2, column "t": episode "c" starts at t = 3`},
		{"bad-value", []string{head + "a,0,1,0,1,0.5,0.5\n", head + "c,0,1,0,x,0.5,0.5\n"},
			`1.csv: row 2, column "reward"`},
		// An episode's rows scattered over shards: its gap is named with
		// the rule that shards follow.
		{"scattered", []string{head + "a,0,1,0,1,0.5,0.5\na,2,1,0,1,0.5,0.5\n", head + "a,1,1,0,1,0.5,0.5\n"},
			`0.csv: row 3, column "t": gap in episode "a": t jumps from 0 to 2 (t = 1 is missing); in a shard, an episode's rows run on without gaps`},
	}
	for _, c := range cases {
		sub := filepath.Join(dir, c.name)
		os.Mkdir(sub, 0o755)
		for i, s := range c.shards {
			write(filepath.Join(c.name, fmt.Sprintf("%d.csv", i)), s)
		}
		files, _ := stream.Files(sub)
		stats, _ := stream.New(stream.Config{Estimators: []string{"naive"}, Gamma: 1})
		r := stream.Reader{Files: files}
		err := r.Each(stats.Add)
		var fe *logio.FormatError
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &fe) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	if _, err := stream.New(stream.Config{Estimators: []string{"dr"}, Gamma: 1}); err == nil || !strings.Contains(err.Error(), "dr cannot stream") {
		t.Errorf("dr: %v", err)
	}
	// The tabular learners on real states: each fails under its own name,
	// those sharing the first one's counts included, and Applies says so.
	write("real.csv", "episode,t,state_0,action,reward,behavior_prob,target_prob,target_prob_0,target_prob_1\na,0,0.5,0,1,0.5,0.5,0.5,0.5\na,1,0.7,1,1,0.5,0.5,0.5,0.5\n")
	real, err := logio.ReadFile(filepath.Join(dir, "real.csv"))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"naive", "model-based", "fqe", "mwl"}
	stats, err := stream.New(stream.Config{Estimators: names, Gamma: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := stats.Add(real, 0, real.NumEpisodes()); err != nil {
		t.Fatal(err)
	}
	res, err := stats.Finish()
	if err != nil {
		t.Fatal(err)
	}
	for k, e := range res.Estimates {
		if k == 0 {
			if e.Err != nil {
				t.Errorf("naive: %v", e.Err)
			}
			continue
		}
		if e.Err == nil || !strings.HasPrefix(e.Err.Error(), names[k]+": ") || !strings.Contains(e.Err.Error(), "tabular form only") {
			t.Errorf("%s on real states: %v", names[k], e.Err)
		}
	}
	if err := stream.Applies("fqe", real, ope.Options{}); err == nil || !strings.Contains(err.Error(), "tabular form only") {
		t.Errorf("Applies fqe on real states: %v", err)
	}
}

// The intervals are fixed numbers for a seed, and move with it.
func TestStreamDeterministic(t *testing.T) {
	d := taxiLog(t, 8, 30, 60)
	_, glob := splitCSV(t, d, 3)
	cfg := stream.Config{Estimators: []string{"wis-trajectory"}, Gamma: 1, Resamples: 30, Seed: 1}
	a, b := run(t, glob, cfg), run(t, glob, cfg)
	cfg.Seed = 2
	c := run(t, glob, cfg)
	ia, ib, ic := a.Estimates[0].Interval, b.Estimates[0].Interval, c.Estimates[0].Interval
	if ia.Low != ib.Low || ia.High != ib.High {
		t.Errorf("seed 1 twice: %v, %v", ia, ib)
	}
	if ia.Low == ic.Low && ia.High == ic.High {
		t.Errorf("seeds 1 and 2 give one interval %v", ia)
	}
	_ = bytes.MinRead
}

// One continuing episode cut into 4 shards is joined whole: the
// estimators that take one episode give the in-memory estimates.
func TestStreamOneEpisodeAcrossShards(t *testing.T) {
	d := taxiLog(t, 9, 1, 4000)
	whole, glob := splitCSV(t, d, 4)
	full, err := logio.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"naive", "bch-tabular", "model-based", "fqe", "mwl", "mql", "dualdice"}
	o := ope.Options{Estimand: ope.LongRun} // a continuing episode's estimand
	res := run(t, glob, stream.Config{Estimators: names, Gamma: 1, Options: o})
	if res.Summary.Episodes != 1 || res.Summary.Steps != 4000 {
		t.Fatalf("summary %+v", res.Summary)
	}
	o.Target, _ = value.TableFromData(full)
	ests, _ := ope.New(names, o)
	for k, est := range ests {
		want, err := est.Estimate(full, 1)
		if err != nil || res.Estimates[k].Err != nil || rel(res.Estimates[k].Result.Value, want.Value) > 1e-12 {
			t.Errorf("%s: stream %v (%v), in memory %v (%v)", est.Name(), res.Estimates[k].Result.Value, res.Estimates[k].Err, want.Value, err)
		}
	}
	// The IS estimators need several episodes, and say so.
	res = run(t, glob, stream.Config{Estimators: []string{"wis-stepwise"}, Gamma: 1})
	if e := res.Estimates[0].Err; e == nil || !strings.Contains(e.Error(), "needs several episodes") {
		t.Errorf("wis-stepwise on one episode: %v", e)
	}
	// The Poisson bootstrap resamples episodes: one episode gets no
	// intervals, and a warning (it got intervals of width 0).
	res = run(t, glob, stream.Config{Estimators: []string{"naive", "bch-tabular"}, Gamma: 1, Resamples: 20, Options: o})
	for _, e := range res.Estimates {
		if e.Err != nil || e.Interval != nil {
			t.Errorf("%s on one episode with resamples: interval %+v, error %v", e.Name, e.Interval, e.Err)
		}
	}
	if len(res.Warnings) != 1 || res.Warnings[0] != stream.OneEpisodeWarning {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// Episodes that end in a terminal state are refused, saying why and
// where: the shard, and the row where the episode begins.
func TestStreamRefusesTerminal(t *testing.T) {
	dir := t.TempDir()
	body := "episode,t,state,action,reward,behavior_prob,target_prob,terminal\n" +
		"a,0,1,0,1,0.5,0.5,0\na,1,2,0,1,0.5,0.5,1\nb,0,1,0,1,0.5,0.5,0\n"
	if err := os.WriteFile(filepath.Join(dir, "0.csv"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	stats, _ := stream.New(stream.Config{Estimators: []string{"naive"}, Gamma: 1})
	r := stream.Reader{Files: []string{filepath.Join(dir, "0.csv")}}
	want := filepath.Join(dir, "0.csv") + `: row 2, column "terminal": episode "a" (beginning on this row) ends in a terminal state`
	if err := r.Each(stats.Add); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("terminal episode: %v, want %q", err, want)
	}
	// The last episode of a shard, carried over to the next one, and one
	// that goes on into it: the shard and row where each begins.
	for _, c := range []struct{ shards []string }{
		{[]string{"b,0,1,0,1,0.5,0.5,0\na,0,1,0,1,0.5,0.5,0\na,1,2,0,1,0.5,0.5,1\n", "c,0,1,0,1,0.5,0.5,0\n"}},
		{[]string{"b,0,1,0,1,0.5,0.5,0\na,0,1,0,1,0.5,0.5,0\n", "a,1,2,0,1,0.5,0.5,1\nc,0,1,0,1,0.5,0.5,0\n"}},
		{[]string{"b,0,1,0,1,0.5,0.5,0\na,0,1,0,1,0.5,0.5,0\na,1,2,0,1,0.5,0.5,1\n"}},
	} {
		sub := t.TempDir()
		var files []string
		for k, body := range c.shards {
			files = append(files, filepath.Join(sub, fmt.Sprintf("%d.csv", k)))
			if err := os.WriteFile(files[k], []byte("episode,t,state,action,reward,behavior_prob,target_prob,terminal\n"+body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		stats, _ := stream.New(stream.Config{Estimators: []string{"naive"}, Gamma: 1})
		want := files[0] + `: row 3, column "terminal": episode "a" (beginning on this row) ends in a terminal state`
		r := stream.Reader{Files: files}
		if err := r.Each(stats.Add); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%d shards: %v, want %q", len(files), err, want)
		}
	}
}

// Empty shards (a header alone, as distributed writers leave them) are
// skipped, even between two parts of one episode; a stream of empty
// shards only is refused.
func TestStreamEmptyShards(t *testing.T) {
	d := taxiLog(t, 4, 6, 300)
	_, glob := splitCSV(t, d, 3)
	names := []string{"naive", "wis-stepwise", "bch-tabular"}
	want := run(t, glob, stream.Config{Estimators: names, Gamma: 1})
	dir := filepath.Dir(glob)
	b, err := os.ReadFile(filepath.Join(dir, "part-000.csv"))
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(string(b), "\n")
	for _, name := range []string{"part-000z.csv", "part-002z.csv"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(header+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := run(t, glob, stream.Config{Estimators: names, Gamma: 1})
	for k := range names {
		if g, w := got.Estimates[k], want.Estimates[k]; g.Err != nil || g.Result.Value != w.Result.Value {
			t.Errorf("%s with empty shards: %v (%v), without %v", names[k], g.Result.Value, g.Err, w.Result.Value)
		}
	}
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "a.csv"), []byte(header+"\n"), 0o644)
	files, _ := stream.Files(empty)
	r := stream.Reader{Files: files}
	if err := r.Each(func(*dataset.Dataset, int, int) error { return nil }); err == nil || !strings.Contains(err.Error(), "every shard is empty") {
		t.Errorf("only empty shards: %v", err)
	}
}

// One shard whose rows are shuffled gives the estimates of the log read
// as one file: both read its episodes in the natural order of their ids
// (the shard used to keep the order of first appearance, and dualdice's
// ill-conditioned solve moved by 3e-5).
func TestStreamShuffledShard(t *testing.T) {
	d := discreteLog(t, 2, 5, 30, 60)
	whole, _ := splitCSV(t, d, 1)
	b, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	rows := lines[1 : len(lines)-1]
	rand.New(rand.NewPCG(3, 0)).Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	dir := t.TempDir()
	shard := filepath.Join(dir, "part-0.csv")
	if err := os.WriteFile(shard, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	full, err := logio.ReadFile(shard)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"mwl", "dualdice"}
	res := run(t, shard, stream.Config{Estimators: names, Gamma: 0.9, Options: ope.Options{RealStates: true}})
	ests, _ := ope.New(names, ope.Options{})
	for k, est := range ests {
		want, err := est.Estimate(full, 0.9)
		if err != nil || res.Estimates[k].Err != nil || rel(res.Estimates[k].Result.Value, want.Value) > 1e-12 {
			t.Errorf("%s: shuffled shard %v (%v), as one file %v (%v)", est.Name(), res.Estimates[k].Result.Value, res.Estimates[k].Err, want.Value, err)
		}
	}
}

// Statistics merged into an empty accumulator, as a Beam combiner merges
// its shards, give the estimates of the statistics added directly, for
// the learners whose target comes from the logs' target_prob_k columns
// (an audit found all five empty: the merged target table had lost its
// number of actions).
func TestStreamMergeIntoEmpty(t *testing.T) {
	d := taxiLog(t, 6, 20, 50)
	cfg := stream.Config{Estimators: []string{"model-based", "fqe", "mwl", "mql", "dualdice"}, Gamma: 1}
	direct, err := stream.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	acc, _ := stream.New(cfg)
	for _, half := range [][2]int{{0, 10}, {10, 20}} {
		part, _ := stream.New(cfg)
		if err := part.Add(d, half[0], half[1]); err != nil {
			t.Fatal(err)
		}
		if err := direct.Add(d, half[0], half[1]); err != nil {
			t.Fatal(err)
		}
		if err := acc.Merge(part); err != nil {
			t.Fatal(err)
		}
	}
	want, err := direct.Finish()
	if err != nil {
		t.Fatal(err)
	}
	got, err := acc.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Estimates) != 5 || len(got.Estimates) != 5 {
		t.Fatalf("%d and %d estimates, want 5", len(got.Estimates), len(want.Estimates))
	}
	for k, w := range want.Estimates {
		g := got.Estimates[k]
		if w.Err != nil || g.Err != nil || !(math.Abs(g.Result.Value-w.Result.Value) <= 1e-12) {
			t.Errorf("%s: merged %v (%v), added %v (%v)", w.Name, g.Result.Value, g.Err, w.Result.Value, w.Err)
		}
	}
}

// A shard whose columns differ from the first one's, here without the
// target's whole distribution that the first gives, is refused, naming
// it (an audit's shard without target_prob_k columns was read, and the
// tabular learners then said the logs had none).
func TestStreamShardColumnsDiffer(t *testing.T) {
	dir := t.TempDir()
	with := "episode,t,state,action,reward,behavior_prob,target_prob,target_prob_0,target_prob_1\na,0,1,0,1,0.5,0.5,0.5,0.5\n"
	without := "episode,t,state,action,reward,behavior_prob,target_prob\nb,0,1,0,1,0.5,0.5\n"
	files := []string{filepath.Join(dir, "0.csv"), filepath.Join(dir, "1.csv")}
	for i, body := range []string{with, without} {
		if err := os.WriteFile(files[i], []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stats, _ := stream.New(stream.Config{Estimators: []string{"naive"}, Gamma: 1})
	r := stream.Reader{Files: files}
	want := files[1] + ": the shards disagree on their columns: discrete states, discrete actions, behavior probabilities, not the target's whole distribution (target_prob_k), where the first shards have"
	if err := r.Each(stats.Add); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("%v, want %q", err, want)
	}
}
