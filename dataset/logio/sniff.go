package logio

import (
	"bytes"
	"fmt"
	"strings"
)

// sniffLen is how much of a file's start the readers look at to say what
// a file that is not a log looks like.
const sniffLen = 4096

// looks says what a file looks like, for a message: what it is and what
// to do about it.
type looks struct {
	what string // "gzip-compressed data"
	fix  string // "read it as %s.gz (...)" with %s the text format; "" if none
}

// sniff says what the first bytes of a file (head) look like when they
// are not the start of a CSV or TSV log: compressed, UTF-16, a Parquet
// file or a spreadsheet, or binary. ok is false when they look like text.
//
// Only the first line decides, and only by bytes that no column name
// holds (control bytes, NUL, the byte-order marks of UTF-16), so a file
// that reads as a log is never refused here: the sniff turns the message
// of a file refused anyway (a quote in an unquoted field, a column named
// "\x1f\x8b\b") into one that says what the file is.
func sniff(head []byte) (l looks, ok bool) {
	switch {
	case bytes.HasPrefix(head, []byte("\x1f\x8b")):
		return looks{"gzip-compressed data", "read it as %s.gz (name it .%[1]s.gz, or give --format %[1]s.gz)"}, true
	case bytes.HasPrefix(head, []byte("\xff\xfe")), bytes.HasPrefix(head, []byte("\xfe\xff")):
		return looks{"UTF-16 text (it starts with a UTF-16 byte-order mark)", utf16Fix}, true
	}
	line := head
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	bad := bytes.IndexFunc(line, func(r rune) bool { return r == 0 || r < 0x20 && r != '\t' && r != '\r' || r == 0x7f })
	if bad < 0 {
		return looks{}, false
	}
	for _, m := range magics {
		if bytes.HasPrefix(head, []byte(m.prefix)) {
			return m.looks, true
		}
	}
	if utf16Like(line) {
		return looks{"UTF-16 text (every other byte of its first line is 0)", utf16Fix}, true
	}
	return looks{fmt.Sprintf("binary data (byte 0x%02x at offset %d of its first line)", line[bad], bad), ""}, true
}

const utf16Fix = "save it as UTF-8 (in Excel: CSV UTF-8; or iconv -f UTF-16 -t UTF-8)"

// magics are the starts of files that are not text, and what they are.
var magics = []struct {
	prefix string
	looks
}{
	{"PAR1", looks{"a Parquet file", "read it as parquet (name it .parquet, or give --format parquet)"}},
	{"PK\x03\x04", looks{"a zip archive (an Excel .xlsx workbook is one)", "export the sheet as CSV, or unzip the archive"}},
	{"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", looks{"an Excel 97-2003 workbook (or another OLE2 file)", "export the sheet as CSV"}},
	{"BZh", looks{"bzip2-compressed data", "decompress it first (bunzip2); ihope reads gzip (%s.gz) itself"}},
	{"\xfd7zXZ\x00", looks{"xz-compressed data", "decompress it first (unxz); ihope reads gzip (%s.gz) itself"}},
	{"\x28\xb5\x2f\xfd", looks{"zstd-compressed data", "decompress it first (unzstd); ihope reads gzip (%s.gz) itself"}},
}

// fixFor returns l.fix with the text format's name in place of %s and
// %[1]s (fmt.Sprintf would append "%!(EXTRA ...)" to the hints that name none;
// only the compression hints name it).
func (l looks) fixFor(format string) string {
	return strings.NewReplacer("%[1]s", format, "%s", format).Replace(l.fix)
}

// utf16Like reports whether line is ASCII text written as UTF-16: a NUL
// at every other byte.
func utf16Like(line []byte) bool {
	if len(line) < 4 {
		return false
	}
	var zeros [2]int
	for i, c := range line {
		if c == 0 {
			zeros[i%2]++
		}
	}
	half := len(line) / 2
	return zeros[0] >= half-1 && zeros[1] == 0 || zeros[1] >= half-1 && zeros[0] == 0
}

// notTextError is the error for a file read as the text format f that
// looks like something else.
func notTextError(name string, f Format, l looks) error {
	msg := fmt.Sprintf("not %s text: this is %s", f.text().upper(), l.what)
	if l.fix != "" {
		msg += "; " + l.fixFor(string(f.text()))
	}
	return &FormatError{File: name, Msg: msg}
}

// delimiterError explains a header that is one field because the file is
// separated by another character than f's, or "" if it is not so.
func delimiterError(name string, f Format, header []byte) error {
	var other byte
	for _, c := range []byte{'\t', ';', ',', '|'} {
		if c != f.sep() && bytes.IndexByte(header, c) >= 0 {
			other = c
			break
		}
	}
	var msg string
	switch other {
	case 0:
		return nil
	case '\t':
		msg = "is split by tabs: read it as tsv (name it .tsv, or give --format tsv)"
	case ',':
		msg = "is split by commas: read it as csv (name it .csv, or give --format csv)"
	case ';':
		msg = "is split by semicolons (as spreadsheets in many locales write CSV): ihope reads commas; " +
			"export it with commas between fields (and points as decimal marks)"
	default:
		msg = "is split by '|': ihope reads commas (csv) or tabs (tsv); export it with one of them"
	}
	return &FormatError{File: name, Row: 1, Msg: fmt.Sprintf("the header is one column, %s, which %s", quote(header), msg)}
}

// describe says what a file read as Parquet looks like when it has no
// Parquet frame: text of a log, compressed, binary.
func describe(head []byte) string {
	if l, ok := sniff(head); ok {
		s := "it looks like " + l.what
		if l.fix != "" && l.what != "a Parquet file" {
			s += "; " + l.fixFor("csv")
		}
		return s
	}
	line := head
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	switch {
	case bytes.Count(line, []byte{','}) >= 2:
		return "it looks like CSV text; read it as csv (name it .csv, or give --format csv)"
	case bytes.Count(line, []byte{'\t'}) >= 2:
		return "it looks like TSV text; read it as tsv (name it .tsv, or give --format tsv)"
	}
	return ""
}
