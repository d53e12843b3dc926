package dataset_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/parquet-go/parquet-go"
)

// TestLongColumnName checks that a column name of 1 MiB is cut in the
// message, in both forms, with its length: a 16 MiB Parquet column name
// was printed whole (50 MB of stderr).
func TestLongColumnName(t *testing.T) {
	long := "x" + strings.Repeat("é", 1<<19) // 1 MiB; byte 64 is inside a rune
	want := `column "x` + strings.Repeat("é", 29) + `"…(1048577 bytes): unknown column: rename it (a name this long cannot be given as a flag)`

	csv := "episode,t,state,action,reward,behavior_prob,target_prob," + long + "\ne,0,0,0,1,0.5,0.5,1\n"
	g := parquet.Group{"episode": parquet.String(), "t": parquet.Int(64), "state": parquet.Int(64), "action": parquet.Int(64),
		"reward": parquet.Leaf(parquet.DoubleType), "behavior_prob": parquet.Leaf(parquet.DoubleType),
		"target_prob": parquet.Leaf(parquet.DoubleType), long: parquet.Leaf(parquet.DoubleType)}
	var pq bytes.Buffer
	w := parquet.NewWriter(&pq, parquet.NewSchema("log", g))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		read func() error
	}{
		{"csv", func() error { _, err := logio.ReadCSV(strings.NewReader(csv), "log.csv"); return err }},
		{"parquet", func() error {
			_, err := logio.ReadParquet(bytes.NewReader(pq.Bytes()), int64(pq.Len()), "log.parquet")
			return err
		}},
	} {
		err := c.read()
		if err == nil || !strings.Contains(err.Error(), want) || len(err.Error()) > 400 {
			t.Errorf("%s: got %.500v\nwant it to hold %q and be short", c.name, err, want)
		}
	}
}
