package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchmarkQuick runs "ihope benchmark --quick" (every suite, small
// logs, two seeds: the CI smoke test of the leaderboard), checks the
// files it writes and that a rerun computes nothing.
func TestBenchmarkQuick(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := Run([]string{"benchmark", "--quick", "--parallel-cells", "2", "--out-dir", dir}, &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	files := []string{
		"benchmark-cobs.quick.jsonl", "benchmark-dice.quick.jsonl", "benchmark-paper.quick.jsonl",
		"leaderboard.quick.md", "leaderboard.quick.json",
		"leaderboard.quick-cobs.png", "leaderboard.quick-dice.svg", "leaderboard.quick-paper.png", "leaderboard.quick-all.png",
		"benchmark-paper.quick-taxi.png", "benchmark-cobs.quick-modelfail.svg",
	}
	for _, f := range files {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "leaderboard.quick.md"))
	if !bytes.Equal(md, out.Bytes()[:len(md)]) {
		t.Error("stdout does not start with the leaderboard's Markdown")
	}
	for _, want := range []string{"## Overall (mean over 7 worlds)", "## graph:", "## toymc:", "## modelfail:", "## modelwin:",
		"## gridwalk:", "## taxi:", "## ring:", "| `dr` | horizon |", "| `bch-tabular` | long-run |", "Spearman", "regret@5"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("leaderboard lacks %q", want)
		}
	}
	var board struct {
		Seeds   int `json:"seeds"`
		Overall []struct {
			Estimator string   `json:"estimator"`
			Coverage  *float64 `json:"coverage"`
			Worlds    int      `json:"worlds"`
		} `json:"overall"`
		Worlds []struct {
			World  string    `json:"world"`
			Truths []float64 `json:"truths"`
		} `json:"worlds"`
	}
	js, _ := os.ReadFile(filepath.Join(dir, "leaderboard.quick.json"))
	if err := json.Unmarshal(js, &board); err != nil {
		t.Fatal(err)
	}
	if board.Seeds != 2 || len(board.Worlds) != 7 || len(board.Overall) < 10 {
		t.Fatalf("board: %d seeds, %d worlds, %d estimators", board.Seeds, len(board.Worlds), len(board.Overall))
	}
	for _, r := range board.Overall {
		if r.Worlds != 7 || r.Coverage == nil {
			t.Errorf("%s: %d worlds, coverage %v", r.Estimator, r.Worlds, r.Coverage)
		}
	}

	// A rerun finds every cell and computes none.
	out.Reset()
	errb.Reset()
	if code := Run([]string{"benchmark", "--quick", "--out-dir", dir}, &out, &errb); code != ExitOK {
		t.Fatalf("rerun: exit %d: %s", code, errb.String())
	}
	if strings.Count(errb.String(), "(0 computed now") != 3 {
		t.Errorf("rerun said %q", errb.String())
	}
}

func TestBenchmarkErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"benchmark", "--suite", "nope"}, ExitUsage, "--suite"},
		{[]string{"benchmark", "--seeds=-1"}, ExitUsage, "must not be negative"},
	}
	for i, c := range cases {
		var out, errb bytes.Buffer
		if code := Run(append(c.args, "--out-dir", t.TempDir()), &out, &errb); code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("case %d: exit %d, stderr %q; want %d and %q", i, code, errb.String(), c.code, c.want)
		}
	}
}
