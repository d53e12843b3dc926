package logio

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/format"
)

// hybrid builds an RLE/bit-packed hybrid stream of bit width 1 from
// runs: an RLE run of count values v, or (groups > 0) a bit-packed run
// of groups groups whose bytes are all fill.
type hybridRun struct {
	rle, groups uint64
	v, fill     byte
}

func hybrid(runs ...hybridRun) []byte {
	var b []byte
	for _, r := range runs {
		if r.groups > 0 {
			b = binary.AppendUvarint(b, r.groups<<1|1)
			b = append(b, bytes.Repeat([]byte{r.fill}, int(r.groups))...)
		} else {
			b = binary.AppendUvarint(b, r.rle<<1)
			b = append(b, r.v)
		}
	}
	return b
}

// TestHybridPadding checks the bound on the values the last run of a
// page's levels or indices may hold past the page's values: DuckDB's
// padding to a block of 256 values is read, more is refused, and padding
// never counts as values.
func TestHybridPadding(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		n    int
		ones int
		want string // part of the refusal, "" if read
	}{
		{"exact", hybrid(hybridRun{rle: 5000, v: 1}), 5000, 5000, ""},
		{"a group padded by 7", hybrid(hybridRun{groups: 2, fill: 0xff}), 9, 9, ""},
		// DuckDB 1.5.6: 5,120 levels declared for a page of 5,000.
		{"duckdb, 5120 for 5000", hybrid(hybridRun{rle: 4864, v: 1}, hybridRun{groups: 32, fill: 0x55}), 5000, 4864 + 68, ""},
		{"duckdb, 1280 for 1271", hybrid(hybridRun{groups: 160, fill: 0x01}), 1271, 159, ""},
		{"padded by 255", hybrid(hybridRun{groups: 32, fill: 0xff}), 1, 1, ""},
		{"padded by 263", hybrid(hybridRun{groups: 33, fill: 0xff}), 1, 0, "a run of 264 levels in a page of 1 values (1 left)"},
		{"an RLE run padded by 300", hybrid(hybridRun{rle: 310, v: 1}), 10, 0, "a run of 310 levels in a page of 10 values"},
		{"a run after the values", hybrid(hybridRun{rle: 8, v: 1}, hybridRun{rle: 1, v: 1}), 8, 0, "a run of 1 levels after the 8 values of its page"},
		{"a padded run, then another", hybrid(hybridRun{groups: 2, fill: 1}, hybridRun{groups: 1, fill: 1}), 9, 0, "a run of 8 levels after the 9 values of its page"},
		{"too few", hybrid(hybridRun{rle: 4999, v: 1}), 5000, 0, "levels for 4999 values in a page of 5000"},
		{"a huge RLE run", hybrid(hybridRun{rle: 1 << 62, v: 1}), 5000, 0, "a run of 4611686018427387904 levels"},
	} {
		ones, msg := scanLevels(c.b, c.n)
		switch {
		case c.want == "" && (msg != "" || ones != c.ones):
			t.Errorf("%s: %d ones, %q; want %d ones", c.name, ones, msg, c.ones)
		case c.want != "" && !strings.Contains(msg, c.want):
			t.Errorf("%s: %q, want %q", c.name, msg, c.want)
		}
	}

	// Indices of width 1 in a dictionary of 2 (so scanLevels' streams
	// serve), and a width of 0, whose bit-packed runs take no bytes.
	for _, c := range []struct {
		name         string
		b            []byte
		n, width, dN int
		want         string
	}{
		{"duckdb, 1280 for 1271", hybrid(hybridRun{groups: 160, fill: 0xaa}), 1271, 1, 2, ""},
		{"padded by 263", hybrid(hybridRun{groups: 33}), 1, 1, 2, "a run of 264 indices in a page of 1 values"},
		{"width 0, padded by 248", binary.AppendUvarint(nil, 32<<1|1), 8, 0, 1, ""},
		{"width 0, a huge run", binary.AppendUvarint(nil, 1<<62|1), 8, 0, 1, "groups of indices in a page of 8 values"},
		{"an index past the dictionary", hybrid(hybridRun{rle: 4, v: 2}), 4, 2, 2, "dictionary index 2 of a dictionary of 2"},
	} {
		if msg := scanIndices(c.b, c.n, c.width, c.dN); (c.want == "" && msg != "") || !strings.Contains(msg, c.want) {
			t.Errorf("indices, %s: %q, want %q", c.name, msg, c.want)
		}
	}
}

// footerOf returns the compact Thrift bytes of a FileMetaData holding
// only groups row groups of k empty column chunks each.
func footerOf(groups uint64, k int) []byte {
	b := []byte{0x49, 0xfc} // field 4, a list of structs
	b = binary.AppendUvarint(b, groups)
	for range groups {
		b = append(b, 0x19, byte(k<<4|12)) // field 1, a list of k structs
		b = append(b, make([]byte, k)...)  // k empty structs
		b = append(b, 0)                   // the row group ends
	}
	return append(b, 0)
}

// TestFooterShape checks that a footer's column chunks are counted
// before it is decoded, and a footer of more than its data can hold, or
// more than maxMetaMemory decoded, is refused (a footer of 200,000 row
// groups took 3.7 GB before).
func TestFooterShape(t *testing.T) {
	for _, c := range []struct {
		groups  uint64
		k       int
		dataEnd int64
		want    string
	}{
		{1000, 7, 1 << 20, ""},
		{200000, 7, 825, "declares 1400000 column chunks in 200000 row groups, more than its 825 bytes of data can hold (reading the metadata would take about 3.4 GiB)"},
		{200000, 7, 1 << 40, "reading it would take about 3.4 GiB, more than the 1.0 GiB ihope allows"},
		{58996, 7, 1 << 40, ""}, // 412,972 chunks: just under 1 GiB
		{58997, 7, 1 << 40, "declares 412979 column chunks"},
	} {
		b := footerOf(c.groups, c.k)
		groups, chunks, err := footerShape(b)
		if err != nil || groups != c.groups || chunks != c.groups*uint64(c.k) {
			t.Errorf("%d x %d: footerShape gives %d, %d, %v", c.groups, c.k, groups, chunks, err)
		}
		if msg := checkFooterShape(b, c.dataEnd); (c.want == "" && msg != "") || !strings.Contains(msg, c.want) {
			t.Errorf("%d x %d in %d bytes: %q, want %q", c.groups, c.k, c.dataEnd, msg, c.want)
		}
	}
}

// TestAppendBooleans checks ihope's own decoding of BOOLEAN pages, plain
// and RLE, the runs parquet-go (0.32) misreads among them (its RLE runs are
// whole bytes of the value), appended after booleans that end mid-byte.
func TestAppendBooleans(t *testing.T) {
	withLength := func(b []byte) []byte {
		return append(binary.LittleEndian.AppendUint32(nil, uint32(len(b))), b...)
	}
	for _, c := range []struct {
		name string
		enc  format.Encoding
		b    []byte
		n    int
		want string // the values, 0 and 1
	}{
		{"plain", format.Plain, []byte{0x5a, 0x01}, 9, "010110101"},
		{"bit-packed only", format.RLE, withLength(hybrid(hybridRun{groups: 2, fill: 0x5a})), 13, "0101101001011"},
		{"zeros in whole bytes, then bit-packed", format.RLE, withLength(hybrid(hybridRun{rle: 16}, hybridRun{groups: 1, fill: 0x04})), 20, "00000000000000000010"},
		{"ones", format.RLE, withLength(hybrid(hybridRun{rle: 8, v: 1})), 8, "11111111"},
		// arrow-rs's v2 pages: 10 false then a true (parquet-go read it at 16).
		{"a run of 10 zeros, then a one", format.RLE, withLength(hybrid(hybridRun{rle: 10}, hybridRun{rle: 1, v: 1})), 11, "00000000001"},
		// DuckDB's: the last run padded past the page's values.
		{"a padded last run", format.RLE, withLength(hybrid(hybridRun{rle: 3, v: 1}, hybridRun{groups: 32, fill: 0xff})), 5, "11111"},
	} {
		if msg := checkBooleans(c.enc, c.b, c.n); msg != "" {
			t.Errorf("%s: checkBooleans: %s", c.name, msg)
			continue
		}
		bits, k := appendBooleans([]byte{0x05}, 3, c.enc, c.b, c.n) // 1, 0, 1 before
		want := "101" + c.want
		got := ""
		for i := range k {
			got += string('0' + bits[i/8]>>(i%8)&1)
		}
		if got != want || len(bits) != (k+7)/8 {
			t.Errorf("%s: %s in %d bytes, want %s", c.name, got, len(bits), want)
		}
	}
}
