package dataset_test

import (
	"bytes"
	"errors"
	"reflect"
	"runtime"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
)

// FuzzReadCSV checks that ReadCSV never panics, refuses bad input only with
// a *FormatError, and that every log it accepts reads back identically
// after WriteCSV. Run it with
//
//	go test ./dataset -run '^$' -fuzz FuzzReadCSV -fuzztime 60s
func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{
		hdr + ok,
		hdr + ok + "a,1,2,1,-0.5,1,0\n",
		"episode,t,state_0,state_1,action_0,reward,behavior_logprob,target_logprob,next_state_0,next_state_1\n" +
			"\"x,\"\"y\"\"\",0,1.5,-2,0.25,3,1.5,-Inf,,\n\"x,\"\"y\"\"\",1,2,3,0.5,-1,-2,0,4,5\n",
		"target_logprob,next_state,reward,action,state,t,episode,behavior_logprob\r\n-Inf,,1,0,0,0,e,-0.5\r\n-1,9,2,2,1,1,e,-1.5\r\n",
		"\xef\xbb\xbf" + hdr + "b,1,1,0,1,0.5,0.5\nb,0,3.0,1e0,1,0.5,0.5",
		"",
		hdr,
		hdr + "a,0,1,0,NaN,0.5,0.5\n",
		hdr + ok + "a,1,1,0,0.",
		hdr + ok + "\n" + ok,
		hdr + "\"a\n,0,1,0,1,0.5,0.5\n",
		"episode,t,state,action,reward,behavior_prob,target_prob,next_state\na,0,1,0,1,0.5,0.5,2\na,1,3,0,1,0.5,0.5,\n",
		// The target's whole distribution.
		tpHdr + tpRow0 + tpRow1,
		tpNextHdr + tpNext1 + tpNext0 + "b,0,2,2,0,1,0,0,1,0,1,0,0\n",
		tpScalarHdr + "a,0,0,1,1,0.5,0.8000001,0.2,0.8,0\n",
		tpHdr + "a,0,0,1,1,0.5,0.2,0.7999995,0.0000004\n",
	} {
		f.Add([]byte(s))
	}
	f.Add(writeCSV(f, sampled(f, 3, 4)))
	f.Add(writeCSV(f, continuous(f)))
	f.Add(writeCSV(f, withTargetProbs(f)["vector states"]))
	f.Fuzz(func(t *testing.T, in []byte) {
		var d *dataset.Dataset
		var err error
		boundedAlloc(t, in, func() { d, err = logio.ReadCSV(bytes.NewReader(in), "fuzz.csv") })
		if err != nil {
			var fe *logio.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FormatError", err)
			}
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("accepted a dataset that does not validate: %v", err)
		}
		var buf bytes.Buffer
		if err := logio.WriteCSV(&buf, d); err != nil {
			t.Fatalf("WriteCSV: %v", err)
		}
		again, err := logio.ReadCSV(bytes.NewReader(buf.Bytes()), "again.csv")
		if err != nil {
			t.Fatalf("reading back %q: %v", buf.Bytes(), err)
		}
		if !reflect.DeepEqual(again, d) {
			t.Fatalf("read back differs:\n%+v\n%+v", again, d)
		}
	})
}

// FuzzReadParquet checks that ReadParquet never panics on a damaged file,
// allocates in proportion to the file's size whatever the file declares,
// and that whatever it accepts is a valid dataset. Run it with
//
//	GOMEMLIMIT=512MiB go test ./dataset -run '^$' -fuzz FuzzReadParquet -fuzztime 5m
//
// testdata/fuzz/FuzzReadParquet keeps the inputs that failed before: a
// page declaring gigabytes, a damaged LZ4 page parquet-go doubled its
// buffer for until the process died (since read with ihope's own LZ4 codec, lz4Block), run lengths far beyond their page.
func FuzzReadParquet(f *testing.F) {
	f.Add(writeParquet(f, sampled(f, 2, 3)))
	f.Add(writeParquet(f, continuous(f)))
	f.Add(writeParquet(f, withTargetProbs(f)["vector states"]))
	for _, seed := range parquetSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var d *dataset.Dataset
		var err error
		boundedAlloc(t, in, func() { d, err = logio.ReadParquet(bytes.NewReader(in), int64(len(in)), "fuzz.parquet") })
		if err != nil {
			var fe *logio.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FormatError", err)
			}
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("accepted a dataset that does not validate: %v", err)
		}
	})
}

// boundedAlloc runs read and fails t if it allocated more than a reader
// may for an input of in's size: a fixed 16 MiB (a batch of values per
// column) and 16 KiB per byte (a row of the dataset and its parsing for
// each of the maxRowsPerByte = 64 rows a byte may declare, with room to
// spare). A file of a few kilobytes that makes a reader allocate
// gigabytes fails here rather than by exhausting the machine.
func boundedAlloc(t *testing.T, in []byte, read func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	read()
	runtime.ReadMemStats(&after)
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(16<<20+16<<10*len(in)); got > limit {
		t.Fatalf("reading %d bytes allocated %d MiB (at most %d MiB)", len(in), got>>20, limit>>20)
	}
}
