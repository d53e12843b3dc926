package stream_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/stream"
)

// shardRows is a shard of n two-step episodes with even ids from first,
// large enough (n = 4000: 192 KB) that its middle lies beyond the 64 KiB
// a stamp hashes at each end.
func shardRows(first, n int) string {
	var b strings.Builder
	b.WriteString("episode,t,state,action,reward,behavior_prob,target_prob\n")
	for e := range n {
		id := first + 2*e
		fmt.Fprintf(&b, "e%06d,0,%d,1,1,0.5,0.5\ne%06d,1,%d,0,2,0.5,0.5\n", id, e%7, id, (e+1)%7)
	}
	return b.String()
}

// A shard changed between the two passes of a Reader (the test changes
// it between its two calls of Each, as bch-kernel's passes would see it)
// is an error naming the shard and what changed; unchanged shards pass
// twice with the same episodes.
func TestStreamShardChangedBetweenPasses(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, path, body string)
		want   string
	}{
		{"unchanged", func(*testing.T, string, string) {}, ""},
		{"rows dropped", func(t *testing.T, path, body string) {
			write(t, path, body[:strings.LastIndex(body[:len(body)-1], "\n")+1], time.Time{})
		}, "its size went from 192056 to 192032 bytes"},
		{"touched", func(t *testing.T, path, body string) {
			st, _ := os.Stat(path)
			write(t, path, body, st.ModTime().Add(time.Second))
		}, "its modification time went from"},
		{"a reward rewritten, size and time kept", func(t *testing.T, path, body string) {
			st, _ := os.Stat(path)
			write(t, path, strings.Replace(body, ",1,0.5,0.5\n", ",3,0.5,0.5\n", 1), st.ModTime())
		}, "its first or last 64 KiB differ"},
		{"an episode split in the middle, size, time and ends kept", func(t *testing.T, path, body string) {
			st, _ := os.Stat(path)
			// e104000's second step becomes an episode e104001 of its own.
			write(t, path, strings.Replace(body, "e104000,1,", "e104001,0,", 1), st.ModTime())
		}, "the second pass over the shards found 4001 episodes beginning in this shard, the first 4000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			a, b := filepath.Join(dir, "part-0.csv"), filepath.Join(dir, "part-1.csv")
			write(t, a, shardRows(0, 4000), time.Time{})
			body := shardRows(100000, 4000)
			write(t, b, body, time.Time{})
			r := stream.Reader{Files: []string{a, b}}
			count := func(n *int) func(*dataset.Dataset, int, int) error {
				return func(_ *dataset.Dataset, lo, hi int) error { *n += hi - lo; return nil }
			}
			var first, second int
			if err := r.Each(count(&first)); err != nil || first != 8000 {
				t.Fatalf("first pass: %d episodes, %v", first, err)
			}
			c.change(t, b, body)
			err := r.Each(count(&second))
			if c.want == "" {
				if err != nil || second != first {
					t.Errorf("second pass: %d episodes, %v", second, err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), b+": ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error naming %s and saying %q", err, b, c.want)
			}
		})
	}
}

// write writes body to path, and sets its modification time to mod
// unless mod is zero.
func write(t *testing.T, path, body string, mod time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if !mod.IsZero() {
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
}
