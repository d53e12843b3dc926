package logio

// Checks of a Parquet file before parquet-go reads it.
//
// parquet-go trusts the sizes a file declares and allocates by them: a
// list length in the metadata, a page's compressed and uncompressed
// sizes, a snappy or zstd stream's declared length, the length of a run
// in a run-length encoding, a delta encoding's value count. A damaged file
// of a few kilobytes made it allocate gigabytes, and a damaged LZ4 page
// made it double its buffer until the process died. So ReadParquet first
// reads the metadata and every page of the columns it will read, checks
// each declared size against the file's size and against what the page
// holds, and lets parquet-go decode only what passed. Nothing here is
// timed: a file is refused for what it declares, never for how long it
// takes.
//
// The bounds, all in proportion to the file's size:
//
//   - a list or string in the metadata or a page header has at most one
//     element per byte that follows it (so the decoded metadata takes at
//     most a few hundred bytes per byte of the file's footer);
//   - the file declares at most maxRowsPerByte rows per byte (a log of n
//     steps takes far more than n/64 bytes in any encoding writers use:
//     the step index t alone, delta-encoded, takes about n/20);
//   - a page of numbers decompresses to at most maxExpansion bytes per
//     byte of the file (more than deflate can reach, 1032, and more than
//     the values of maxRowsPerByte rows can take); a page of strings, whose
//     length nothing bounds, to at most maxStringPage bytes or that;
//   - every run of a run-length or delta encoding stays within the values
//     its page header declares, and those add up to the row group's rows.

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

const (
	// maxRowsPerByte bounds the rows a Parquet file may declare by its
	// size.
	maxRowsPerByte = 64
	// maxExpansion bounds a page's uncompressed size by the file's size,
	// for pages of fixed-size values (numbers).
	maxExpansion = 1024
	// maxStringPage bounds instead a page of byte arrays (strings), whose
	// values have no size the file's size bounds: long ids that are alike
	// compress without limit (10 ids of 30 MB in a valid file of 12 KB).
	// It bounds the memory one page takes to check and decode.
	maxStringPage = 1 << 30
	// maxThriftDepth bounds the nesting of the metadata's structures
	// (Parquet's own go about 7 deep).
	maxThriftDepth = 32
)

// thriftWalker walks a Thrift struct in the compact protocol without
// decoding it, checking that every list, map and string fits in the bytes
// that follow, so that decoding it cannot allocate more than a small
// multiple of its size.
type thriftWalker struct {
	b     []byte
	i     int
	depth int
}

var errThriftShort = errors.New("it ends in the middle of a value")

func (w *thriftWalker) next() (byte, error) {
	if w.i >= len(w.b) {
		return 0, errThriftShort
	}
	w.i++
	return w.b[w.i-1], nil
}

func (w *thriftWalker) uvarint() (uint64, error) {
	v, n := binary.Uvarint(w.b[w.i:])
	switch {
	case n == 0:
		return 0, errThriftShort
	case n < 0:
		return 0, errors.New("a number overflows 64 bits")
	}
	w.i += n
	return v, nil
}

func (w *thriftWalker) skip(n uint64) error {
	if n > uint64(len(w.b)-w.i) {
		return fmt.Errorf("a value of %d bytes has only %d bytes left", n, len(w.b)-w.i)
	}
	w.i += int(n)
	return nil
}

// count checks a list's or map's declared number of elements, each
// taking at least per bytes.
func (w *thriftWalker) count(n uint64, per int) error {
	if left := uint64(len(w.b) - w.i); n > left/uint64(per) {
		return fmt.Errorf("a list declares %d elements in %d bytes", n, left)
	}
	return nil
}

// value walks a value of compact type t.
func (w *thriftWalker) value(t byte) error {
	switch t {
	case 1, 2: // a boolean field: its value is its type
		return nil
	case 3:
		return w.skip(1)
	case 4, 5, 6:
		_, err := w.uvarint()
		return err
	case 7:
		return w.skip(8)
	case 8:
		n, err := w.uvarint()
		if err != nil {
			return err
		}
		return w.skip(n)
	case 9, 10:
		return w.list()
	case 11:
		return w.dict()
	case 12:
		return w.structure()
	case 13:
		return w.skip(16)
	}
	return fmt.Errorf("unknown value type %d", t)
}

// element walks an element of a list or map: booleans take a byte there.
func (w *thriftWalker) element(t byte) error {
	if t == 1 || t == 2 {
		return w.skip(1)
	}
	return w.value(t)
}

func (w *thriftWalker) list() error {
	h, err := w.next()
	if err != nil {
		return err
	}
	n := uint64(h >> 4)
	if n == 15 {
		if n, err = w.uvarint(); err != nil {
			return err
		}
	}
	if err := w.count(n, 1); err != nil {
		return err
	}
	for range n {
		if err := w.element(h & 0xf); err != nil {
			return err
		}
	}
	return nil
}

func (w *thriftWalker) dict() error {
	n, err := w.uvarint()
	if err != nil || n == 0 {
		return err
	}
	kv, err := w.next()
	if err != nil {
		return err
	}
	if err := w.count(n, 2); err != nil {
		return err
	}
	for range n {
		if err := w.element(kv >> 4); err != nil {
			return err
		}
		if err := w.element(kv & 0xf); err != nil {
			return err
		}
	}
	return nil
}

func (w *thriftWalker) structure() error {
	if w.depth++; w.depth > maxThriftDepth {
		return fmt.Errorf("structures nested more than %d deep", maxThriftDepth)
	}
	for {
		h, err := w.next()
		if err != nil {
			return err
		}
		if h == 0 {
			w.depth--
			return nil
		}
		if h>>4 == 0 { // a field id of its own
			if _, err := w.uvarint(); err != nil {
				return err
			}
		}
		if err := w.value(h & 0xf); err != nil {
			return err
		}
	}
}

// decodeThrift checks the Thrift struct at the start of b and decodes it
// into v; it returns the struct's length in bytes.
func decodeThrift(b []byte, v any) (int, error) {
	w := thriftWalker{b: b}
	if err := w.structure(); err != nil {
		return 0, err
	}
	var p thrift.CompactProtocol
	if err := thrift.NewDecoder(p.NewReaderFromBytes(b[:w.i])).Decode(v); err != nil {
		return 0, err
	}
	return w.i, nil
}

// pqChecker checks a Parquet file's metadata and pages.
type pqChecker struct {
	r       io.ReaderAt
	size    int64 // the file's size
	dataEnd int64 // where the footer starts
	md      format.FileMetaData
	zstd    *zstd.Decoder // made when the first zstd page comes

	// Scratch: a page's header window, its bytes, its bytes decompressed,
	// and the lengths of its byte arrays (checkValues).
	head, raw, out []byte
	lens           [2][]int64

	// bools are the chunk's BOOLEAN values, not null, a bit each
	// (appendBooleans); nbools counts them.
	bools  []byte
	nbools int
}

// readHeader decodes the page header at off into h, with at most left
// bytes before its column chunk ends, and returns its length. It reads a
// small window first, and a larger one while the header goes on.
func (c *pqChecker) readHeader(off, left int64, h *format.PageHeader) (int, error) {
	window := min(left, 4096)
	for {
		c.head = slices.Grow(c.head[:0], int(window))[:window]
		if _, err := c.r.ReadAt(c.head, off); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		n, err := decodeThrift(c.head, h)
		if err == nil || window == left {
			return n, err
		}
		*h = format.PageHeader{}
		window = min(left, 4*window)
	}
}

// newPQChecker reads and checks the file's metadata (its footer), whose
// frame checkParquetFrame has checked.
func newPQChecker(r io.ReaderAt, size int64) (*pqChecker, string) {
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil && !errors.Is(err, io.EOF) {
		return nil, err.Error()
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	c := &pqChecker{r: r, size: size, dataEnd: size - 8 - n}
	footer := make([]byte, n)
	if _, err := r.ReadAt(footer, c.dataEnd); err != nil && !errors.Is(err, io.EOF) {
		return nil, err.Error()
	}
	if msg := checkFooterShape(footer, c.dataEnd); msg != "" {
		return nil, msg
	}
	used, err := decodeThrift(footer, &c.md)
	if err != nil {
		return nil, "its metadata (footer) is damaged: " + err.Error()
	}
	if used != len(footer) {
		return nil, fmt.Sprintf("its metadata (footer) ends %d bytes before the footer does (an encrypted file?)", len(footer)-used)
	}
	return c, c.checkMeta()
}

const (
	// minChunkBytes is the least a column chunk takes in a file's data:
	// one page header (a page of no values takes about 15 bytes).
	minChunkBytes = 8
	// chunkMemory is what one column chunk of the metadata takes in
	// memory once decoded, here and by parquet-go (measured: a footer of
	// 200,000 row groups of 7 columns, 107 MB, took 3.7 GB).
	chunkMemory = 2600
	// maxMetaMemory bounds the memory a file's metadata may take decoded.
	maxMetaMemory = 1 << 30
)

// checkFooterShape counts the row groups and column chunks the footer
// declares, walking it without decoding (decoded, each chunk takes about
// chunkMemory bytes), and refuses a footer whose chunks could not each
// have a page in the dataEnd bytes of data before it, or whose decoding
// would take more than maxMetaMemory.
func checkFooterShape(footer []byte, dataEnd int64) string {
	groups, chunks, err := footerShape(footer)
	if err != nil {
		return "its metadata (footer) is damaged: " + err.Error()
	}
	need := chunks * chunkMemory
	switch {
	case chunks > uint64(max(dataEnd, 0))/minChunkBytes:
		return fmt.Sprintf("its metadata (footer) declares %d column chunks in %d row groups, more than its %d bytes of data can hold (reading the metadata would take about %s)",
			chunks, groups, dataEnd, memSize(need))
	case need > maxMetaMemory:
		return fmt.Sprintf("its metadata (footer) declares %d column chunks in %d row groups; reading it would take about %s, more than the %s ihope allows for a file's metadata: write the file with fewer, larger row groups (e.g. 100,000 rows or more each)",
			chunks, groups, memSize(need), memSize(maxMetaMemory))
	}
	return ""
}

// memSize formats a number of bytes for a message.
func memSize(b uint64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

// footerShape returns the number of row groups in a FileMetaData struct
// (field 4, a list of RowGroup) and of column chunks in them (RowGroup's
// field 1), walking the rest unread.
func footerShape(b []byte) (groups, chunks uint64, err error) {
	w := thriftWalker{b: b}
	// fields walks a struct's fields, calling f on each; f returns
	// whether it has consumed the field's value.
	fields := func(f func(id int, t byte) (bool, error)) error {
		id := 0
		for {
			h, err := w.next()
			if err != nil || h == 0 {
				return err
			}
			if h>>4 == 0 {
				v, err := w.uvarint()
				if err != nil {
					return err
				}
				id = int(int64(v>>1) ^ -int64(v&1))
			} else {
				id += int(h >> 4)
			}
			done, err := f(id, h&0xf)
			if err != nil {
				return err
			}
			if !done {
				if err := w.value(h & 0xf); err != nil {
					return err
				}
			}
		}
	}
	listHead := func() (uint64, byte, error) {
		h, err := w.next()
		if err != nil {
			return 0, 0, err
		}
		n := uint64(h >> 4)
		if n == 15 {
			if n, err = w.uvarint(); err != nil {
				return 0, 0, err
			}
		}
		return n, h & 0xf, w.count(n, 1)
	}
	err = fields(func(id int, t byte) (bool, error) {
		if id != 4 || t != 9 {
			return false, nil
		}
		n, et, err := listHead()
		if err != nil || et != 12 {
			return true, err
		}
		groups += n
		for range n {
			err := fields(func(id int, t byte) (bool, error) {
				if id != 1 || t != 9 {
					return false, nil
				}
				k, et, err := listHead()
				if err != nil {
					return true, err
				}
				chunks += k
				for range k {
					if err := w.element(et); err != nil {
						return true, err
					}
				}
				return true, nil
			})
			if err != nil {
				return true, err
			}
		}
		return true, nil
	})
	return groups, chunks, err
}

// notRead ends a message that refuses a part of a file that is not
// damaged but that ihope does not read.
const notRead = "which ihope does not read"

// checkMeta checks what the metadata declares against the file: the rows
// against its size, the column chunks against where its data lies.
func (c *pqChecker) checkMeta() string {
	var rows int64
	for g, rg := range c.md.RowGroups {
		if rg.NumRows < 0 || rg.NumRows > maxRowsPerByte*c.size-rows {
			return fmt.Sprintf("its row groups declare more than %d rows, impossible in %d bytes", rows+max(rg.NumRows, 0), c.size)
		}
		rows += rg.NumRows
		for _, s := range rg.SortingColumns {
			if s.ColumnIdx < 0 || int(s.ColumnIdx) >= len(rg.Columns) {
				return fmt.Sprintf("row group %d is sorted by column %d of %d", g, s.ColumnIdx, len(rg.Columns))
			}
		}
		for k := range rg.Columns {
			cc := &rg.Columns[k]
			m := &cc.MetaData
			switch {
			case cc.FilePath != "":
				return fmt.Sprintf("row group %d keeps column %d in another file, %q", g, k, cc.FilePath)
			case cc.CryptoMetadata.Value != nil || len(cc.EncryptedColumnMetadata) > 0:
				return "it is encrypted"
			}
			start := m.DataPageOffset
			if m.DictionaryPageOffset != 0 {
				start = m.DictionaryPageOffset
			}
			if start < 4 || m.TotalCompressedSize < 0 || m.TotalCompressedSize > c.dataEnd-start {
				return fmt.Sprintf("row group %d declares %d bytes of column %d at offset %d, outside the %d bytes of data the file has",
					g, m.TotalCompressedSize, k, start, c.dataEnd)
			}
			switch m.Codec {
			case format.Uncompressed, format.Snappy, format.Gzip, format.Brotli, format.Zstd, format.Lz4Raw:
			default:
				return fmt.Sprintf("column %d is compressed with %s, %s (it reads snappy, gzip, brotli, zstd and lz4_raw)", k, m.Codec, notRead)
			}
			// parquet-go decompresses every chunk of a column with the
			// codec of its first.
			if first := c.md.RowGroups[0].Columns; g > 0 && k < len(first) && m.Codec != first[k].MetaData.Codec {
				return fmt.Sprintf("column %d is compressed with %s in row group 0 and %s in row group %d, %s: write it with one codec",
					k, first[k].MetaData.Codec, m.Codec, g, notRead)
			}
		}
	}
	return ""
}

// pqColumnInfo is what checkChunk needs of a column: its physical type
// and whether it is optional.
type pqColumnInfo struct {
	kind   parquet.Kind
	maxDef int
}

// valueSize is the size of a fixed-size value, 0 for byte arrays.
func (k pqColumnInfo) valueSize() int {
	switch k.kind {
	case parquet.Int32, parquet.Float:
		return 4
	case parquet.Int64, parquet.Double:
		return 8
	}
	return 0
}

// checkChunk reads the pages of column chunk cc of a row group of rows
// rows and checks each: its header, its size, its compressed stream and
// its levels and values against the values it declares.
func (c *pqChecker) checkChunk(cc *format.ColumnChunk, rows int64, col pqColumnInfo) string {
	m := &cc.MetaData
	if m.NumValues != rows {
		return fmt.Sprintf("declares %d values in a row group of %d rows", m.NumValues, rows)
	}
	start := m.DataPageOffset
	if m.DictionaryPageOffset != 0 {
		start = m.DictionaryPageOffset
	}
	total := m.TotalCompressedSize
	bound := maxExpansion * c.size
	c.bools, c.nbools = c.bools[:0], 0
	if col.valueSize() == 0 {
		bound = max(bound, maxStringPage)
	}
	dictN := -1 // entries of the dictionary, -1 before a dictionary page
	var values int64
	for page, pos := 0, int64(0); pos < total; page++ {
		fail := func(format string, args ...any) string {
			return fmt.Sprintf("page %d: %s", page, fmt.Sprintf(format, args...))
		}
		var h format.PageHeader
		n, err := c.readHeader(start+pos, total-pos, &h)
		if err != nil {
			return fail("damaged page header: %v", err)
		}
		pos += int64(n)
		if h.CompressedPageSize < 0 || int64(h.CompressedPageSize) > total-pos {
			return fail("declares %d bytes, but its column chunk has %d left", h.CompressedPageSize, total-pos)
		}
		if h.UncompressedPageSize < 0 || int64(h.UncompressedPageSize) > bound {
			if col.valueSize() == 0 {
				return fail("declares %d bytes of strings uncompressed, more than ihope decodes in one page (%d)", h.UncompressedPageSize, bound)
			}
			return fail("declares %d bytes uncompressed, impossible in a file of %d bytes", h.UncompressedPageSize, c.size)
		}
		c.raw = slices.Grow(c.raw[:0], int(h.CompressedPageSize))[:h.CompressedPageSize]
		data := c.raw
		if _, err := c.r.ReadAt(data, start+pos); err != nil && !errors.Is(err, io.EOF) {
			return err.Error()
		}
		pos += int64(len(data))
		switch h.Type {
		case format.DictionaryPage:
			if !h.DictionaryPageHeader.Valid || page > 0 {
				return fail("a dictionary page must come first and only once")
			}
			d := h.DictionaryPageHeader.V
			if d.Encoding != format.Plain && d.Encoding != format.PlainDictionary {
				return fail("dictionary encoded as %s", d.Encoding)
			}
			content, msg := c.decompress(m.Codec, data, int(h.UncompressedPageSize))
			if msg != "" {
				return fail("%s", msg)
			}
			if d.NumValues < 0 {
				return fail("declares %d dictionary entries", d.NumValues)
			}
			if msg := checkPlain(content, int(d.NumValues), col); msg != "" {
				return fail("dictionary: %s", msg)
			}
			dictN = int(d.NumValues)
		case format.DataPage:
			if !h.DataPageHeader.Valid {
				return fail("no data page header")
			}
			d := h.DataPageHeader.V
			nv := int64(d.NumValues)
			if nv < 0 || nv > rows-values {
				return fail("declares %d values, more than the %d rows left in its row group", nv, rows-values)
			}
			values += nv
			content, msg := c.decompress(m.Codec, data, int(h.UncompressedPageSize))
			if msg != "" {
				return fail("%s", msg)
			}
			nonNull := int(nv)
			if col.maxDef > 0 {
				if d.DefinitionLevelEncoding != format.RLE {
					return fail("definition levels encoded as %s; ihope reads RLE", d.DefinitionLevelEncoding)
				}
				if len(content) < 4 {
					return fail("no definition levels")
				}
				k := int64(binary.LittleEndian.Uint32(content))
				if k > int64(len(content)-4) {
					return fail("declares %d bytes of definition levels in %d", k, len(content)-4)
				}
				if nonNull, msg = scanLevels(content[4:4+k], int(nv)); msg != "" {
					return fail("definition levels: %s", msg)
				}
				content = content[4+k:]
			}
			if msg := checkValues(d.Encoding, content, nonNull, col, dictN, &c.lens); msg != "" {
				return fail("%s", msg)
			}
			if col.kind == parquet.Boolean {
				c.bools, c.nbools = appendBooleans(c.bools, c.nbools, d.Encoding, content, nonNull)
			}
		case format.DataPageV2:
			if !h.DataPageHeaderV2.Valid {
				return fail("no data page header")
			}
			d := h.DataPageHeaderV2.V
			nv := int64(d.NumValues)
			switch {
			case nv < 0 || nv > rows-values:
				return fail("declares %d values, more than the %d rows left in its row group", nv, rows-values)
			case d.NumNulls < 0 || d.NumNulls > d.NumValues:
				return fail("declares %d nulls in %d values", d.NumNulls, d.NumValues)
			case d.NumNulls > 0 && col.maxDef == 0:
				return fail("declares %d nulls in a required column", d.NumNulls)
			case d.RepetitionLevelsByteLength != 0:
				return fail("repetition levels in a column that is not repeated")
			case d.DefinitionLevelsByteLength < 0 || int(d.DefinitionLevelsByteLength) > len(data) ||
				int(d.DefinitionLevelsByteLength) > int(h.UncompressedPageSize):
				return fail("declares %d bytes of definition levels in %d", d.DefinitionLevelsByteLength, len(data))
			case d.DefinitionLevelsByteLength > 0 && col.maxDef == 0:
				return fail("definition levels in a required column")
			}
			values += nv
			nonNull := int(nv - int64(d.NumNulls))
			levels := data[:d.DefinitionLevelsByteLength]
			if col.maxDef > 0 {
				ones, msg := scanLevels(levels, int(nv))
				if msg != "" {
					return fail("definition levels: %s", msg)
				}
				if ones != nonNull {
					return fail("declares %d nulls, but its definition levels have %d", d.NumNulls, int(nv)-ones)
				}
			}
			content := data[len(levels):]
			if !d.IsCompressed.Valid || d.IsCompressed.V {
				var msg string
				if content, msg = c.decompress(m.Codec, content, int(h.UncompressedPageSize)-len(levels)); msg != "" {
					return fail("%s", msg)
				}
			}
			if msg := checkValues(d.Encoding, content, nonNull, col, dictN, &c.lens); msg != "" {
				return fail("%s", msg)
			}
			if col.kind == parquet.Boolean {
				c.bools, c.nbools = appendBooleans(c.bools, c.nbools, d.Encoding, content, nonNull)
			}
		default:
			return fail("a page of type %s, %s", h.Type, notRead)
		}
	}
	if values != rows {
		return fmt.Sprintf("its pages hold %d values, but its row group has %d rows", values, rows)
	}
	return ""
}

// decompress decompresses a page that declares n bytes uncompressed into
// a buffer of n bytes, refusing a stream that declares or yields more or
// fewer; what passes here parquet-go decompresses into the same n bytes.
func (c *pqChecker) decompress(codec format.CompressionCodec, src []byte, n int) ([]byte, string) {
	if n < 0 {
		return nil, "a negative uncompressed size"
	}
	var out []byte
	var err error
	switch codec {
	case format.Uncompressed:
		return src, "" // parquet-go ignores the declared size then
	case format.Snappy:
		k, e := snappy.DecodedLen(src)
		switch {
		case e != nil:
			err = e
		case k != n:
			return nil, fmt.Sprintf("its snappy stream declares %d bytes, its header %d", k, n)
		default:
			out, err = snappy.Decode(c.scratch(n), src)
		}
	case format.Gzip:
		var z *gzip.Reader
		if z, err = gzip.NewReader(bytes.NewReader(src)); err == nil {
			out, err = readExactly(z, c.scratch(n))
		}
	case format.Brotli:
		out, err = readExactly(brotli.NewReader(bytes.NewReader(src)), c.scratch(n))
	case format.Zstd:
		if c.zstd == nil {
			c.zstd, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(max(maxExpansion*c.size, maxStringPage))))
			if err != nil {
				return nil, err.Error()
			}
		}
		out, err = c.zstd.DecodeAll(src, c.scratch(n)[:0])
	case format.Lz4Raw:
		out = c.scratch(n)
		var k int
		if k, err = lz4.UncompressBlock(src, out); err == nil {
			out = out[:k]
		}
	default:
		return nil, fmt.Sprintf("compressed with %s", codec)
	}
	if err != nil {
		return nil, fmt.Sprintf("damaged %s stream: %v", codec, err)
	}
	if len(out) != n {
		return nil, fmt.Sprintf("its %s stream holds %d bytes, its header declares %d", codec, len(out), n)
	}
	return out, ""
}

// scratch returns the checker's buffer for decompressed pages, n bytes
// long.
func (c *pqChecker) scratch(n int) []byte {
	c.out = slices.Grow(c.out[:0], n)[:n]
	return c.out
}

// close releases the checker's decoders.
func (c *pqChecker) close() {
	if c.zstd != nil {
		c.zstd.Close()
	}
}

// readExactly fills out from r and checks that r ends there.
func readExactly(r io.Reader, out []byte) ([]byte, error) {
	n := len(out)
	if _, err := io.ReadFull(r, out); err != nil {
		return nil, err
	}
	var one [1]byte
	if k, _ := r.Read(one[:]); k > 0 {
		return nil, fmt.Errorf("more than the %d bytes declared", n)
	}
	return out, nil
}

// maxPad is how many values the last run of an RLE/bit-packed hybrid
// stream may hold past the values its page declares. The format counts
// a bit-packed run in groups of 8 values, so a writer pads the last group
// (parquet-go, Arrow, parquet-mr pad by at most 7); DuckDB bit-packs in
// blocks of 256 values and declares the whole last block (5,120 values
// for a page of 5,000). Readers stop at the page's values and never look
// at the padding, so it is harmless; a run that starts after the page's
// values, or pads by more, is refused as a page that lies.
const maxPad = 255

// runFits checks a run of count values starting after total of a page
// of n values: it must start before the page's values end and end at
// most maxPad values after them. what names the values in a message.
func runFits(count uint64, total, n int, what string) string {
	switch {
	case count == 0:
		return ""
	case total >= n:
		return fmt.Sprintf("a run of %d %s after the %d values of its page", count, what, n)
	case count > uint64(n-total+maxPad):
		return fmt.Sprintf("a run of %d %s in a page of %d values (%d left)", count, what, n, n-total)
	}
	return ""
}

// scanLevels checks the definition levels of n values (bit width 1,
// RLE/bit-packed hybrid) and returns how many are 1 (not null): runs must
// add up to the n values, the last padded by at most maxPad.
func scanLevels(b []byte, n int) (ones int, msg string) {
	total := 0
	for i := 0; i < len(b); {
		h, k := binary.Uvarint(b[i:])
		if k <= 0 {
			return 0, "a damaged run header"
		}
		i += k
		count := h >> 1
		if h&1 == 1 { // count groups of 8, a byte each
			if count > uint64(len(b)-i) {
				return 0, "a bit-packed run longer than its data"
			}
			if msg := runFits(8*count, total, n, "levels"); msg != "" {
				return 0, msg
			}
			run := b[i : i+int(count)]
			take := max(0, min(8*int(count), n-total))
			for j := 0; j < take/8; j++ {
				ones += bits.OnesCount8(run[j])
			}
			if r := take % 8; r > 0 {
				ones += bits.OnesCount8(run[take/8] & (1<<r - 1))
			}
			total += 8 * int(count)
			i += int(count)
		} else {
			if msg := runFits(count, total, n, "levels"); msg != "" {
				return 0, msg
			}
			if i >= len(b) {
				return 0, "a run without its value"
			}
			switch b[i] {
			case 0:
			case 1:
				ones += max(0, min(int(count), n-total))
			default:
				return 0, fmt.Sprintf("level %d in a column whose levels are 0 and 1", b[i])
			}
			total += int(count)
			i++
		}
	}
	if total < n {
		return 0, fmt.Sprintf("levels for %d values in a page of %d", total, n)
	}
	return ones, ""
}

// checkValues checks the n (non-null) values of a data page, encoded as
// enc; dictN is the number of dictionary entries (-1 without a
// dictionary).
func checkValues(enc format.Encoding, b []byte, n int, col pqColumnInfo, dictN int, lens *[2][]int64) string {
	size := col.valueSize()
	if col.kind == parquet.Boolean {
		return checkBooleans(enc, b, n)
	}
	switch enc {
	case format.Plain:
		return checkPlain(b, n, col)
	case format.PlainDictionary, format.RLEDictionary:
		if dictN < 0 {
			return "dictionary-encoded values without a dictionary page before them"
		}
		if len(b) == 0 {
			if n == 0 {
				return ""
			}
			return "no dictionary indices"
		}
		if b[0] > 32 {
			return fmt.Sprintf("dictionary indices of %d bits", b[0])
		}
		return scanIndices(b[1:], n, int(b[0]), dictN)
	case format.DeltaBinaryPacked:
		if size == 0 || col.kind == parquet.Float || col.kind == parquet.Double {
			return fmt.Sprintf("%s values encoded as %s", col.kind, enc)
		}
		_, used, msg := decodeDelta(nil, b, n, size == 4, false)
		if msg == "" && used != len(b) {
			msg = fmt.Sprintf("%d bytes after its values", len(b)-used)
		}
		return msg
	case format.DeltaLengthByteArray:
		if size != 0 {
			return fmt.Sprintf("%s values encoded as %s", col.kind, enc)
		}
		lengths, used, msg := decodeDelta(lens[0], b, n, true, true)
		lens[0] = lengths
		if msg != "" {
			return "lengths: " + msg
		}
		return checkLengths(lengths, nil, len(b)-used)
	case format.DeltaByteArray:
		if size != 0 {
			return fmt.Sprintf("%s values encoded as %s", col.kind, enc)
		}
		prefixes, used, msg := decodeDelta(lens[0], b, n, true, true)
		lens[0] = prefixes
		if msg != "" {
			return "prefix lengths: " + msg
		}
		suffixes, used2, msg := decodeDelta(lens[1], b[used:], n, true, true)
		lens[1] = suffixes
		if msg != "" {
			return "suffix lengths: " + msg
		}
		return checkLengths(suffixes, prefixes, len(b)-used-used2)
	case format.ByteStreamSplit:
		if size == 0 {
			return fmt.Sprintf("%s values encoded as %s", col.kind, enc)
		}
		if len(b) != n*size {
			return fmt.Sprintf("%d bytes for %d values of %d bytes", len(b), n, size)
		}
		return ""
	}
	return fmt.Sprintf("values encoded as %s, %s", enc, notRead)
}

// checkBooleans checks n BOOLEAN values: bit-packed, a bit each (PLAIN),
// or an RLE/bit-packed hybrid stream of bit width 1 after its 4-byte
// length (RLE, which v2 pages use).
func checkBooleans(enc format.Encoding, b []byte, n int) string {
	switch enc {
	case format.Plain:
		if len(b) != (n+7)/8 {
			return fmt.Sprintf("%d bytes for %d booleans", len(b), n)
		}
		return ""
	case format.RLE:
		if len(b) < 4 {
			return "no length before the booleans"
		}
		k := int64(binary.LittleEndian.Uint32(b))
		if k != int64(len(b)-4) {
			return fmt.Sprintf("declares %d bytes of booleans in %d", k, len(b)-4)
		}
		_, msg := scanLevels(b[4:], n)
		return msg
	}
	return fmt.Sprintf("booleans encoded as %s, %s", enc, notRead)
}

// appendBooleans appends the n booleans of b, encoded as enc and checked
// by checkBooleans, to the bit set bits of k booleans (least significant
// bit first), and returns it and k + n.
//
// ihope decodes BOOLEAN columns itself because parquet-go (0.32) misreads
// RLE-encoded ones: its decoder appends a bit-packed run's bytes as they
// are, but an RLE run of k values as ceil(k/8) copies of the value's byte,
// so a run of ones reads as 0x01 bytes and a run of a length not a
// multiple of 8 shifts every value after it (arrow-rs's v2 pages: a
// terminal of 1 on row 11 read on row 17).
func appendBooleans(bits []byte, k int, enc format.Encoding, b []byte, n int) ([]byte, int) {
	set := func(v bool) {
		if k%8 == 0 {
			bits = append(bits, 0)
		}
		if v {
			bits[k/8] |= 1 << (k % 8)
		}
		k++
	}
	if enc == format.Plain {
		for j := range n {
			set(b[j/8]>>(j%8)&1 == 1)
		}
		return bits, k
	}
	b = b[4:]
	for i, left := 0, n; i < len(b) && left > 0; {
		h, w := binary.Uvarint(b[i:])
		i += w
		count := int(h >> 1)
		if h&1 == 1 { // bit-packed: count groups of 8
			run := b[i : i+count]
			for j := range min(8*count, left) {
				set(run[j/8]>>(j%8)&1 == 1)
			}
			left -= min(8*count, left)
			i += count
		} else { // a run of count copies of one value, in a byte
			for range min(count, left) {
				set(b[i]&1 == 1)
			}
			left -= min(count, left)
			i++
		}
	}
	return bits, k
}

// checkPlain checks n plainly encoded values: n fixed-size values, or n
// byte arrays each after its 4-byte length, filling b exactly.
func checkPlain(b []byte, n int, col pqColumnInfo) string {
	if size := col.valueSize(); size > 0 {
		if len(b) != n*size {
			return fmt.Sprintf("%d bytes for %d values of %d bytes", len(b), n, size)
		}
		return ""
	}
	if n > len(b)/4 {
		return fmt.Sprintf("%d strings in %d bytes", n, len(b))
	}
	i := 0
	for range n {
		if len(b)-i < 4 {
			return fmt.Sprintf("fewer than the %d strings declared", n)
		}
		k := int64(binary.LittleEndian.Uint32(b[i:]))
		if k > int64(len(b)-i-4) {
			return fmt.Sprintf("a string of %d bytes with %d left", k, len(b)-i-4)
		}
		i += 4 + int(k)
	}
	if i != len(b) {
		return fmt.Sprintf("%d bytes after the %d strings declared", len(b)-i, n)
	}
	return ""
}

// checkLengths checks the lengths of byte arrays (with DELTA_BYTE_ARRAY,
// the suffixes' and the prefixes' shared with the value before): none is
// negative, a prefix is no longer than the value before it, and the
// suffixes fill the rest of the page exactly.
func checkLengths(suffixes, prefixes []int64, rest int) string {
	var sum, prev int64
	for i, s := range suffixes {
		p := int64(0)
		if prefixes != nil {
			p = prefixes[i]
		}
		if s < 0 || p < 0 || p > prev {
			return fmt.Sprintf("value %d has a length of %d after a prefix of %d (the value before has %d bytes)", i, s, p, prev)
		}
		sum += s
		prev = p + s
		if sum > int64(rest) {
			return fmt.Sprintf("the values need more than the %d bytes left", rest)
		}
	}
	if sum != int64(rest) {
		return fmt.Sprintf("the values take %d bytes of the %d left", sum, rest)
	}
	return ""
}

// scanIndices checks the n dictionary indices of width bits each
// (RLE/bit-packed hybrid): each below dictN, the runs adding up to n, the
// last padded by at most maxPad.
func scanIndices(b []byte, n, width, dictN int) string {
	total := 0
	vbytes := (width + 7) / 8
	for i := 0; i < len(b); {
		h, k := binary.Uvarint(b[i:])
		if k <= 0 {
			return "a damaged run header"
		}
		i += k
		count := h >> 1
		if h&1 == 1 { // count groups of 8 values
			if count > uint64(n+maxPad) { // before 8*count can overflow
				return fmt.Sprintf("a run of %d groups of indices in a page of %d values", count, n)
			}
			if msg := runFits(8*count, total, n, "indices"); msg != "" {
				return msg
			}
			m := int(count) * width // bytes: 8 values of width bits a group
			if m > len(b)-i {
				return "a bit-packed run longer than its data"
			}
			take := max(0, min(8*int(count), n-total))
			if msg := checkPacked(b[i:i+m], take, width, dictN); msg != "" {
				return msg
			}
			total += 8 * int(count)
			i += m
		} else {
			if msg := runFits(count, total, n, "indices"); msg != "" {
				return msg
			}
			if vbytes > len(b)-i {
				return "a run without its value"
			}
			var v uint64
			for j := range vbytes {
				v |= uint64(b[i+j]) << (8 * j)
			}
			if count > 0 && v >= uint64(dictN) {
				return fmt.Sprintf("dictionary index %d of a dictionary of %d", v, dictN)
			}
			total += int(count)
			i += vbytes
		}
	}
	if total < n {
		return fmt.Sprintf("indices for %d values in a page of %d", total, n)
	}
	return ""
}

// checkPacked checks the first n values bit-packed in b (width bits each,
// least significant bit first) against dictN.
func checkPacked(b []byte, n, width, dictN int) string {
	if width == 0 {
		if n > 0 && dictN == 0 {
			return "dictionary index 0 of an empty dictionary"
		}
		return ""
	}
	for j := range n {
		if v := unpack(b, j, width); v >= uint64(dictN) {
			return fmt.Sprintf("dictionary index %d of a dictionary of %d", v, dictN)
		}
	}
	return ""
}

// decodeDelta checks (and with keep, returns) n values in the
// DELTA_BINARY_PACKED encoding at the start of b: its header must declare
// n values in blocks parquet-go reads (a multiple of 128 values at most
// 65536, miniblocks of a multiple of 32), and every miniblock must fit.
// It returns the bytes used. The values kept go into dst's memory when
// it has room (lens in checkValues: a page's lengths are scratch).
func decodeDelta(dst []int64, b []byte, n int, int32s, keep bool) (vals []int64, used int, msg string) {
	i := 0
	uv := func() (uint64, bool) {
		v, k := binary.Uvarint(b[i:])
		if k <= 0 {
			return 0, false
		}
		i += k
		return v, true
	}
	blockSize, ok1 := uv()
	miniblocks, ok2 := uv()
	total, ok3 := uv()
	first, ok4 := uv()
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, 0, "a damaged header"
	}
	switch {
	case blockSize == 0 || blockSize%128 != 0 || blockSize > 65536 || miniblocks == 0 || blockSize%miniblocks != 0 || (blockSize/miniblocks)%32 != 0:
		return nil, 0, fmt.Sprintf("blocks of %d values in %d miniblocks", blockSize, miniblocks)
	case total != uint64(n):
		return nil, 0, fmt.Sprintf("%d values declared in a page of %d", total, n)
	}
	if n == 0 {
		return dst[:0], i, ""
	}
	maxWidth := 64
	if int32s {
		maxWidth = 32
	}
	per := int(blockSize / miniblocks)
	v := int64(first>>1) ^ -int64(first&1) // the running value
	if keep {
		vals = append(slices.Grow(dst[:0], n), wrap(v, int32s))
	}
	left := n - 1
	for left > 0 {
		md, ok := uv()
		if !ok {
			return nil, 0, "a damaged block header"
		}
		minDelta := int64(md>>1) ^ -int64(md&1)
		if int(miniblocks) > len(b)-i {
			return nil, 0, "a block header longer than its data"
		}
		widths := b[i : i+int(miniblocks)]
		i += int(miniblocks)
		for _, w := range widths {
			if left <= 0 {
				break
			}
			if int(w) > maxWidth {
				return nil, 0, fmt.Sprintf("a miniblock of %d-bit values", w)
			}
			// A miniblock takes per*w/8 bytes; the last one may stop
			// after the values it holds, as parquet-go reads it.
			k := min(per, left)
			m := per * int(w) / 8
			if need := (k*int(w) + 7) / 8; need > len(b)-i {
				return nil, 0, "a miniblock longer than its data"
			}
			m = min(m, len(b)-i)
			if keep {
				for j := range k {
					d := unpack(b[i:i+m], j, int(w))
					v = wrap(v+minDelta+int64(d), int32s)
					vals = append(vals, v)
				}
			}
			left -= k
			i += m
		}
	}
	return vals, i, ""
}

// wrap truncates v to 32 bits for INT32 values, as their arithmetic
// wraps there.
func wrap(v int64, int32s bool) int64 {
	if int32s {
		return int64(int32(v))
	}
	return v
}

// unpack returns value j of width bits packed least significant bit
// first in b.
func unpack(b []byte, j, width int) uint64 {
	var v uint64
	bit := j * width
	for got := 0; got < width; {
		byteI, off := (bit+got)/8, (bit+got)%8
		take := min(8-off, width-got)
		v |= uint64(b[byteI]>>off&(1<<take-1)) << got
		got += take
	}
	return v
}
