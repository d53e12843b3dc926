package dataset_test

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
)

// typedParquet writes the CSV form of d as Parquet with typed columns, as
// pyarrow or DuckDB would: episode a string, t and the ids INT64, the
// rest DOUBLE, next_* optional; opts choose the codec, the encodings, the
// page version and sizes.
func typedParquet(t testing.TB, d *dataset.Dataset, opts ...parquet.WriterOption) []byte {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(writeCSV(t, d))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	names := recs[0]
	g := parquet.Group{}
	kinds := make([]byte, len(names)) // 's'tring, 'i'nt, 'd'ouble
	for j, name := range names {
		var node parquet.Node
		switch {
		case name == "episode":
			node, kinds[j] = parquet.String(), 's'
		case name == "t" || name == "state" || name == "action" || name == "next_state":
			node, kinds[j] = parquet.Int(64), 'i'
		default:
			node, kinds[j] = parquet.Leaf(parquet.DoubleType), 'd'
		}
		if strings.HasPrefix(name, "next_") {
			node = parquet.Optional(node)
		}
		g[name] = node
	}
	schema := parquet.NewSchema("log", g)
	index := map[string]int{}
	for i, path := range schema.Columns() {
		index[path[0]] = i
	}
	var rows []parquet.Row
	for _, rec := range recs[1:] {
		row := make(parquet.Row, len(names))
		for j, f := range rec {
			col := index[names[j]]
			def := 0
			if strings.HasPrefix(names[j], "next_") {
				def = 1
			}
			var v parquet.Value
			switch {
			case f == "":
				v, def = parquet.NullValue(), 0
			case kinds[j] == 's':
				v = parquet.ByteArrayValue([]byte(f))
			case kinds[j] == 'i':
				n, err := strconv.ParseInt(f, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				v = parquet.Int64Value(n)
			default:
				x, err := strconv.ParseFloat(f, 64)
				if err != nil {
					t.Fatal(err)
				}
				v = parquet.DoubleValue(x)
			}
			row[col] = v.Level(0, def, col)
		}
		rows = append(rows, row)
	}
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, append([]parquet.WriterOption{schema}, opts...)...)
	if _, err := w.WriteRows(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// parquetForm is a way other programs write Parquet: a codec, encodings,
// data pages v1 or v2, small pages and row groups.
type parquetForm struct {
	name             string
	codec            compress.Codec
	ints, reals, str encoding.Encoding
	v2               bool
}

var parquetForms = []parquetForm{
	{"plain, snappy", &parquet.Snappy, nil, nil, nil, false},
	{"dictionary, gzip", &parquet.Gzip, &parquet.RLEDictionary, &parquet.RLEDictionary, &parquet.RLEDictionary, false},
	{"dictionary, zstd, v2", &parquet.Zstd, &parquet.RLEDictionary, &parquet.RLEDictionary, &parquet.RLEDictionary, true},
	{"delta, brotli, v2", &parquet.Brotli, &parquet.DeltaBinaryPacked, &parquet.ByteStreamSplit, &parquet.DeltaByteArray, true},
	{"delta lengths, gzip", &parquet.Gzip, &parquet.DeltaBinaryPacked, &parquet.Plain, &parquet.DeltaLengthByteArray, false},
	{"uncompressed, v2", &parquet.Uncompressed, &parquet.Plain, &parquet.ByteStreamSplit, &parquet.Plain, true},
}

func (f parquetForm) write(t testing.TB, d *dataset.Dataset) []byte {
	opts := []parquet.WriterOption{parquet.Compression(f.codec), parquet.PageBufferSize(512), parquet.MaxRowsPerRowGroup(40)}
	for _, e := range []struct {
		kind parquet.Kind
		enc  encoding.Encoding
	}{{parquet.Int64, f.ints}, {parquet.Double, f.reals}, {parquet.ByteArray, f.str}} {
		if e.enc != nil {
			opts = append(opts, parquet.DefaultEncodingFor(e.kind, e.enc))
		}
	}
	if f.v2 {
		opts = append(opts, parquet.DataPageVersion(2))
	} else {
		opts = append(opts, parquet.DataPageVersion(1))
	}
	return typedParquet(t, d, opts...)
}

// parquetSeeds are valid files in every form, for the fuzzer to start
// from.
func parquetSeeds(t testing.TB) [][]byte {
	var out [][]byte
	for _, f := range parquetForms {
		out = append(out, f.write(t, sampled(t, 3, 4)))
	}
	return out
}

// The checks ReadParquet makes before parquet-go reads a file refuse no
// valid file: every codec, the dictionary, delta and byte-stream-split
// encodings, data pages v1 and v2, many pages and row groups.
func TestParquetFormsAccepted(t *testing.T) {
	for name, d := range map[string]*dataset.Dataset{
		"discrete":     sampled(t, 20, 15),
		"vector":       continuous(t),
		"target probs": withTargetProbs(t)["vector states"],
	} {
		for _, f := range parquetForms {
			b := f.write(t, d)
			got, err := logio.ReadParquet(bytes.NewReader(b), int64(len(b)), "test.parquet")
			if err != nil {
				t.Errorf("%s, %s: %v", name, f.name, err)
				continue
			}
			if !reflect.DeepEqual(got, d) {
				t.Errorf("%s, %s: read back differs", name, f.name)
			}
		}
	}
}

// splitParquet returns a file's data (from offset 0 to the footer) and
// its decoded footer.
func splitParquet(t *testing.T, b []byte) ([]byte, *format.FileMetaData) {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	var md format.FileMetaData
	if err := thrift.Unmarshal(&thrift.CompactProtocol{}, b[len(b)-8-n:len(b)-8], &md); err != nil {
		t.Fatal(err)
	}
	return b[:len(b)-8-n], &md
}

// joinParquet writes a file from its data and footer.
func joinParquet(t *testing.T, data []byte, md *format.FileMetaData) []byte {
	t.Helper()
	footer, err := thrift.Marshal(&thrift.CompactProtocol{}, md)
	if err != nil {
		t.Fatal(err)
	}
	out := append(bytes.Clone(data), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

// withPage rewrites the first page of column col in the file's first row
// group: change gets its header and data and returns the new data. The
// offsets after it move with it, and the page's checksum is dropped.
func withPage(t *testing.T, b []byte, col string, change func(h *format.PageHeader, data []byte) []byte) []byte {
	t.Helper()
	data, md := splitParquet(t, b)
	var m *format.ColumnMetaData
	for k := range md.RowGroups[0].Columns {
		if c := &md.RowGroups[0].Columns[k].MetaData; c.PathInSchema[0] == col {
			m = c
		}
	}
	start := m.DataPageOffset
	if m.DictionaryPageOffset != 0 {
		start = m.DictionaryPageOffset
	}
	end := start + m.TotalCompressedSize
	var h format.PageHeader
	r := (&thrift.CompactProtocol{}).NewReaderFromBytes(data[start:end])
	if err := thrift.NewDecoder(r).Decode(&h); err != nil {
		t.Fatal(err)
	}
	hlen := int64(r.BytesRead())
	page := data[start+hlen : start+hlen+int64(h.CompressedPageSize)]
	rest := data[start+hlen+int64(h.CompressedPageSize):]
	page = change(&h, bytes.Clone(page))
	h.CRC = 0 // a checksum would catch a damage made by hand, not one written so
	header, err := thrift.Marshal(&thrift.CompactProtocol{}, &h)
	if err != nil {
		t.Fatal(err)
	}
	out := append(append(append(bytes.Clone(data[:start]), header...), page...), rest...)
	delta := int64(len(out) - len(data))
	m.TotalCompressedSize += delta
	for g := range md.RowGroups {
		for k := range md.RowGroups[g].Columns {
			c := &md.RowGroups[g].Columns[k]
			for _, off := range []*int64{&c.MetaData.DataPageOffset, &c.MetaData.DictionaryPageOffset, &c.ColumnIndexOffset, &c.OffsetIndexOffset} {
				if *off > start {
					*off += delta
				}
			}
		}
	}
	return joinParquet(t, out, md)
}

// A damaged file that declares sizes far beyond itself is refused before
// anything is allocated by them, with a message saying what it declares.
func TestParquetHostile(t *testing.T) {
	d := sampled(t, 3, 4)
	v1 := parquet.DataPageVersion(1)
	plain := typedParquet(t, d, parquet.Compression(&parquet.Uncompressed), v1)
	snappy := typedParquet(t, d, parquet.Compression(&parquet.Snappy), v1)
	lz4 := typedParquet(t, d, parquet.Compression(&parquet.Lz4Raw), v1)
	dict := typedParquet(t, d, parquet.Compression(&parquet.Uncompressed), v1, parquet.DefaultEncodingFor(parquet.Int64, &parquet.RLEDictionary))
	delta := typedParquet(t, d, parquet.Compression(&parquet.Uncompressed), parquet.DataPageVersion(2), parquet.DefaultEncodingFor(parquet.Int64, &parquet.DeltaBinaryPacked))
	footer := func(b []byte, change func(md *format.FileMetaData)) []byte {
		data, md := splitParquet(t, b)
		change(md)
		return joinParquet(t, data, md)
	}
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"rows beyond the file", footer(plain, func(md *format.FileMetaData) { md.RowGroups[0].NumRows = 1 << 40 }),
			"its row groups declare more than 1099511627776 rows, impossible in"},
		{"chunk beyond the file", footer(plain, func(md *format.FileMetaData) { md.RowGroups[0].Columns[2].MetaData.TotalCompressedSize = 1 << 30 }),
			"row group 0 declares 1073741824 bytes of column 2 at offset"},
		{"unsupported codec", footer(plain, func(md *format.FileMetaData) { md.RowGroups[0].Columns[0].MetaData.Codec = format.LZO }),
			"column 0 is compressed with LZO, which ihope does not read"},
		{"codec changes between row groups", footer(typedParquet(t, d, parquet.Compression(&parquet.Snappy), v1, parquet.MaxRowsPerRowGroup(6)),
			func(md *format.FileMetaData) { md.RowGroups[1].Columns[0].MetaData.Codec = format.Lz4Raw }),
			"column 0 is compressed with SNAPPY in row group 0 and LZ4_RAW in row group 1, which ihope does not read"},
		{"another file", footer(plain, func(md *format.FileMetaData) { md.RowGroups[0].Columns[0].FilePath = "other.parquet" }),
			`keeps column 0 in another file, "other.parquet"`},
		{"bad sorting column", footer(plain, func(md *format.FileMetaData) {
			md.RowGroups[0].SortingColumns = []format.SortingColumn{{ColumnIdx: 99}}
		}), "row group 0 is sorted by column 99"},
		{"values beyond rows", footer(plain, func(md *format.FileMetaData) {
			rg := &md.RowGroups[0]
			rg.Columns[len(rg.Columns)-1].MetaData.NumValues = rg.NumRows + 1
		}), "declares 13 values in a row group of 12 rows"},
		{"page beyond its chunk", withPage(t, plain, "reward", func(h *format.PageHeader, data []byte) []byte {
			h.CompressedPageSize = 1 << 30
			return data
		}), "page 0: declares 1073741824 bytes, but its column chunk has"},
		{"uncompressed size beyond the file", withPage(t, snappy, "reward", func(h *format.PageHeader, data []byte) []byte {
			h.UncompressedPageSize = 1 << 30
			return data
		}), "page 0: declares 1073741824 bytes uncompressed, impossible in a file of"},
		{"snappy stream longer than declared", withPage(t, snappy, "reward", func(h *format.PageHeader, data []byte) []byte {
			h.UncompressedPageSize--
			return data
		}), "its snappy stream declares 96 bytes, its header 95"},
		{"damaged lz4", withPage(t, lz4, "action", func(h *format.PageHeader, data []byte) []byte {
			for i := range data {
				data[i] = 0xff
			}
			return data
		}), "damaged LZ4_RAW stream"},
		{"values beyond the row group", withPage(t, plain, "reward", func(h *format.PageHeader, data []byte) []byte {
			h.DataPageHeader.V.NumValues = 1 << 30
			return data
		}), "declares 1073741824 values, more than the 12 rows left"},
		{"a run of levels beyond the page", withPage(t, plain, "next_state", func(h *format.PageHeader, data []byte) []byte {
			run := binary.AppendUvarint(nil, (1<<31-1)<<1) // 2^31 - 1 zeros
			levels := binary.LittleEndian.AppendUint32(nil, uint32(len(run)+1))
			levels = append(append(levels, run...), 0)
			h.UncompressedPageSize, h.CompressedPageSize = int32(len(levels)), int32(len(levels))
			return levels
		}), `column "next_state": damaged Parquet file: row group 0: page 0: definition levels: a run of 2147483647 levels in a page of 12 values`},
		{"dictionary index beyond the dictionary", withPage(t, dict, "state", func(h *format.PageHeader, data []byte) []byte {
			h.DictionaryPageHeader.V.NumValues = 1
			h.UncompressedPageSize, h.CompressedPageSize = 8, 8
			return data[:8]
		}), "page 1: dictionary index 1 of a dictionary of 1"},
		{"delta count beyond the page", withPage(t, delta, "t", func(h *format.PageHeader, data []byte) []byte {
			var head []byte
			i := 0
			for k := range 3 {
				v, n := binary.Uvarint(data[i:])
				if k == 2 {
					v = 1 << 40
				}
				head = binary.AppendUvarint(head, v)
				i += n
			}
			out := append(head, data[i:]...)
			h.UncompressedPageSize, h.CompressedPageSize = int32(len(out)), int32(len(out))
			return out
		}), "page 0: 1099511627776 values declared in a page of 12"},
		{"footer list beyond the footer", func() []byte {
			data, _ := splitParquet(t, plain)
			// FileMetaData{version: 1, schema: list of 2^31-1 structs}.
			footer := []byte{0x15, 0x02, 0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00}
			out := binary.LittleEndian.AppendUint32(append(bytes.Clone(data), footer...), uint32(len(footer)))
			return append(out, "PAR1"...)
		}(), "its metadata (footer) is damaged: a list declares 2147483647 elements in 1 bytes"},
	} {
		var err error
		boundedAlloc(t, c.in, func() { _, err = logio.ReadParquet(bytes.NewReader(c.in), int64(len(c.in)), "test.parquet") })
		var fe *logio.FormatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant %q", c.name, err, c.want)
		}
	}
}
