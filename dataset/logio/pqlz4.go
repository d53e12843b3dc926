package logio

import (
	"reflect"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// lz4Block is an LZ4_RAW codec that decodes into the buffer it is given.
//
// parquet-go 0.32's own (compress/lz4) reserves 3 times the compressed
// size; when the buffer it is given is shorter, it decodes into a new one,
// and Column.decompress, seeing a result as long as the page declares,
// keeps the old buffer: the page then reads as whatever that buffer held
// before (DuckDB's LZ4 files failed with "decoding level expected 5000
// values but got only 0"; a stale buffer could as well read as wrong
// numbers). parquet-go gives Decode a buffer as long as the page declares,
// and pqcheck has checked that every page's stream fills exactly that, so
// decoding in place is always right.
type lz4Block struct{}

func (lz4Block) String() string                            { return "LZ4_RAW" }
func (lz4Block) CompressionCodec() format.CompressionCodec { return format.Lz4Raw }

func (lz4Block) Encode(dst, src []byte) ([]byte, error) {
	return parquet.Lz4Raw.Encode(dst, src) // never called: ihope writes snappy
}

func (lz4Block) Decode(dst, src []byte) ([]byte, error) {
	n, err := lz4.UncompressBlock(src, dst[:cap(dst)])
	if err != nil {
		return dst[:0], err
	}
	return dst[:n], nil
}

// codecField is the type of parquet.Column's unexported codec field.
var codecField = reflect.TypeOf((*compress.Codec)(nil)).Elem()

// mendLZ4 gives column c, if parquet-go reads it with its LZ4_RAW codec,
// the codec lz4Block instead, and reports whether c reads LZ4_RAW pages
// right. parquet-go has no option to choose the codec a reader uses, and a
// column's codec is an unexported field, so it is set through reflect; if
// a later parquet-go renames the field, mendLZ4 returns false and pqcheck
// refuses the pages that would be lost (TestParquetCorpus reads DuckDB's,
// arrow-rs's and parquet-go's LZ4 files, so such a change is seen).
func mendLZ4(c *parquet.Column) bool {
	if codec := c.Compression(); codec == nil || codec.CompressionCodec() != format.Lz4Raw {
		return true
	}
	f := reflect.ValueOf(c).Elem().FieldByName("compression")
	if !f.IsValid() || f.Type() != codecField {
		return false
	}
	reflect.NewAt(codecField, unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(compress.Codec(lz4Block{})))
	return true
}
