package stream

import (
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"time"
)

// stampBytes is how much of a shard's head and of its tail a stamp
// hashes: the tail holds a Parquet file's footer (its row groups' sizes
// and statistics), so a rewrite that keeps the size and the time is
// still seen unless it leaves both ends alone.
const stampBytes = 64 << 10

// stamp identifies a shard's content cheaply: its size, its modification
// time, and a hash of its first and last stampBytes. Reader records each
// shard's stamp in its first pass and checks it in every later one, so
// that a shard rewritten between the passes of a two-pass estimator
// (bch-kernel) is an error naming it rather than an estimate mixing two
// logs.
type stamp struct {
	size int64
	mod  time.Time
	sum  uint64
}

func stampOf(path string) (stamp, error) {
	f, err := os.Open(path)
	if err != nil {
		return stamp{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return stamp{}, err
	}
	h := fnv.New64a()
	if _, err := io.Copy(h, io.LimitReader(f, stampBytes)); err != nil {
		return stamp{}, err
	}
	if tail := st.Size() - stampBytes; tail > stampBytes {
		if _, err := io.Copy(h, io.NewSectionReader(f, tail, stampBytes)); err != nil {
			return stamp{}, err
		}
	} else if tail > 0 {
		if _, err := io.Copy(h, io.NewSectionReader(f, stampBytes, tail)); err != nil {
			return stamp{}, err
		}
	}
	return stamp{size: st.Size(), mod: st.ModTime(), sum: h.Sum64()}, nil
}

// differs says how b differs from a, or "" if it does not.
func (a stamp) differs(b stamp) string {
	switch {
	case a.size != b.size:
		return fmt.Sprintf("its size went from %d to %d bytes", a.size, b.size)
	case !a.mod.Equal(b.mod):
		return fmt.Sprintf("its modification time went from %s to %s", a.mod.Format(time.RFC3339Nano), b.mod.Format(time.RFC3339Nano))
	case a.sum != b.sum:
		return "its first or last 64 KiB differ"
	}
	return ""
}
