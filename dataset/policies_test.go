package dataset_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/policy"
)

// policyForms returns a log of two target policies in one file, its
// columns named for them (A: target_prob@A, target_prob_k@A and
// next_target_prob_k@A; B: target_logprob@B), and the same log in
// contract form once for each policy alone.
func policyForms(t *testing.T) (named string, contract [2]string) {
	t.Helper()
	d := sampled(t, 6, 9)
	pA, err := policy.NewTabular(tinyTarget)
	if err != nil {
		t.Fatal(err)
	}
	pB, err := policy.NewTabular([][]float64{{0.3, 0.3, 0.4}, {0.5, 0.25, 0.25}, {0.1, 0.1, 0.8}, {0.2, 0.7, 0.1}})
	if err != nil {
		t.Fatal(err)
	}
	a := d.Clone()
	for j := range a.LogTarget {
		a.LogTarget[j] = math.Log(pA.Prob(int(a.State[j]), int(a.Action[j])))
	}
	if err := a.SetTargetPolicy(pA); err != nil {
		t.Fatal(err)
	}
	b := d.Clone()
	b.TargetProbs, b.FinalTargetProbs, b.HasFinalTarget = nil, nil, nil
	for j := range b.LogTarget {
		b.LogTarget[j] = math.Log(pB.Prob(int(b.State[j]), int(b.Action[j])))
	}
	var tables [2][][]string
	for i, x := range []*dataset.Dataset{a, b} {
		var buf bytes.Buffer
		if err := logio.WriteCSV(&buf, x); err != nil {
			t.Fatal(err)
		}
		contract[i] = buf.String()
		if tables[i], err = csv.NewReader(strings.NewReader(contract[i])).ReadAll(); err != nil {
			t.Fatal(err)
		}
	}
	// The writer writes target_logprob: B's goes beside A's columns.
	rows := tables[0]
	bcol := slices.Index(tables[1][0], "target_logprob")
	if bcol < 0 {
		t.Fatalf("no target_logprob in %q", tables[1][0])
	}
	for i, row := range rows {
		if i == 0 {
			for j, name := range row {
				if strings.Contains(name, "target_") {
					row[j] = name + "@A"
				}
			}
		}
		v := tables[1][i][bcol]
		if i == 0 {
			v += "@B"
		}
		rows[i] = append(row, v)
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	return buf.String(), contract
}

// A log naming two target policies reads as the two logs in contract
// form, one per policy, and the two share every column but the target's.
func TestReadPolicies(t *testing.T) {
	named, contract := policyForms(t)
	path := filepath.Join(t.TempDir(), "two.csv")
	if err := os.WriteFile(path, []byte(named), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, _, err := logio.ReadFilePolicies(path, logio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].Policy != "A" || ds[1].Policy != "B" || !reflect.DeepEqual(ds[1].Policies, []string{"A", "B"}) {
		t.Fatalf("got %d datasets, policies %q %q %q", len(ds), ds[0].Policy, ds[1].Policy, ds[0].Policies)
	}
	for i, d := range ds {
		want, err := logio.ReadCSV(strings.NewReader(contract[i]), "contract.csv")
		if err != nil {
			t.Fatal(err)
		}
		got := *d
		got.Policy, got.Policies = "", nil
		if !reflect.DeepEqual(&got, want) {
			t.Errorf("policy %s: the named log reads differently from its contract form", d.Policy)
		}
	}
	if ds[1].TargetProbs != nil || ds[0].TargetProbs == nil {
		t.Errorf("target_prob_k@A are A's only")
	}
	if &ds[0].State[0] != &ds[1].State[0] || &ds[0].Reward[0] != &ds[1].Reward[0] {
		t.Errorf("the policies' datasets do not share the log's columns")
	}

	// One policy by name; the first by default.
	d, _, err := logio.ReadFileWith(path, logio.ReadOptions{Policy: "B"})
	if err != nil || d.Policy != "B" || d.TargetProbs != nil {
		t.Errorf("Policy B: %v", err)
	}
	// A log with unnamed target columns is one policy.
	plain := filepath.Join(t.TempDir(), "one.csv")
	if err := os.WriteFile(plain, []byte(contract[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	if ds, _, err := logio.ReadFilePolicies(plain, logio.ReadOptions{}); err != nil || len(ds) != 1 || ds[0].Policy != "" || ds[0].Policies != nil {
		t.Errorf("unnamed: %d datasets, %v", len(ds), err)
	}
}

// Named policies' columns are mapped like any other, and their mistakes
// are named like any other's: the file, row and the file's column.
func TestReadPoliciesErrors(t *testing.T) {
	named, _ := policyForms(t)
	lines := strings.Split(named, "\n")
	header := lines[0]
	// A bad probability of B on the file's third row.
	bad := strings.Split(lines[2], ",")
	bad[len(bad)-1] = "0.5x"
	badRow := strings.Join(append(append([]string{header, lines[1]}, strings.Join(bad, ",")), lines[3:]...), "\n")
	// B's column under another name, mapped with --column.
	renamed := strings.Replace(named, "target_logprob@B", "logp_b", 1)
	// A's distribution under another prefix, mapped with a prefix flag.
	prefixed := strings.ReplaceAll(named, "next_target_prob_", "NEXT")
	for k := range 3 {
		prefixed = strings.ReplaceAll(prefixed, fmt.Sprintf("target_prob_%d@A", k), fmt.Sprintf("pa_%d", k))
	}
	prefixed = strings.ReplaceAll(prefixed, "NEXT", "next_target_prob_")
	// An unnamed target column beside named ones.
	mixed := strings.Replace(named, "target_logprob@A,", "target_logprob,", 1)

	for _, c := range []struct {
		name, data string
		o          logio.ReadOptions
		want       string // "" for no error
	}{
		{"bad value of B", badRow, logio.ReadOptions{Policy: "B"}, `row 3, column "target_logprob@B"`},
		{"bad value of B, read all", badRow, logio.ReadOptions{}, `row 3, column "target_logprob@B"`},
		{"renamed", renamed, logio.ReadOptions{Columns: map[string]string{"target_logprob@B": "logp_b"}}, ""},
		{"renamed, unmapped", renamed, logio.ReadOptions{}, `logp_b`},
		{"prefix", prefixed, logio.ReadOptions{Columns: map[string]string{"target_prob_@A": "pa_"}}, ""},
		{"mixed", mixed, logio.ReadOptions{}, `column "target_logprob": is a target column for no policy`},
		{"unknown policy", named, logio.ReadOptions{Policy: "C"}, `no column is named for target policy "C" (the file names A, B)`},
	} {
		path := filepath.Join(t.TempDir(), "log.csv")
		if err := os.WriteFile(path, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		ds, _, err := logio.ReadFilePolicies(path, c.o)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "" && len(ds) != 2:
			t.Errorf("%s: %d policies, want 2", c.name, len(ds))
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
		var fe *logio.FormatError
		if c.want != "" && err != nil && !errors.As(err, &fe) {
			t.Errorf("%s: %T is not a FormatError", c.name, err)
		}
	}
}
