package stream_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/stream"
)

// A symbolic link among the shards, by directory or by glob, is refused
// naming the link and its target, and nothing of the target's content
// appears in the error; without it the shards are listed in order.
func TestFilesRefusesLinks(t *testing.T) {
	const header = "episode,t,state,action,reward,behavior_prob,target_prob\n"
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("SECRET-FIRST-LINE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		link   string // the link's target, "" for none
		glob   bool
		want   string // in the error; "" for none
		listed int
	}{
		{"no link, directory", "", false, "", 2},
		{"no link, glob", "", true, "", 2},
		{"link to a file outside, directory", secret, false, "b.csv: a symbolic link (to " + secret + "); shards are not read through links", 0},
		{"link to a file outside, glob", secret, true, "b.csv: a symbolic link (to " + secret + ")", 0},
		{"dangling link", filepath.Join(outside, "gone.csv"), false, "b.csv: a symbolic link (to " + filepath.Join(outside, "gone.csv") + ")", 0},
		{"link to a shard beside it", "a.csv", false, "b.csv: a symbolic link (to a.csv)", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
			if err := os.WriteFile(a, []byte(header+"e,0,0,0,1,0.5,0.5\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if c.link != "" {
				if err := os.Symlink(c.link, b); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(b, []byte(header+"f,0,0,0,1,0.5,0.5\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			pattern := dir
			if c.glob {
				pattern = filepath.Join(dir, "*.csv")
			}
			files, err := stream.Files(pattern)
			if c.want == "" {
				if err != nil || len(files) != c.listed || files[0] != a || files[1] != b {
					t.Errorf("files %q, error %v", files, err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), b+": ") || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "SECRET") {
				t.Errorf("got %v (files %q), want an error with %q and no content of the target", err, files, c.want)
			}
		})
	}
}

// A directory matched by a glob is refused by name.
func TestFilesRefusesDirectoryInGlob(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "x.csv"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := stream.Files(filepath.Join(dir, "*.csv"))
	if err == nil || !strings.Contains(err.Error(), "x.csv: a directory where a shard file was expected") {
		t.Errorf("got %v", err)
	}
}
