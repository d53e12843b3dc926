package logio

import (
	"compress/flate"
	"compress/gzip"
	"errors"
	"io"
)

// gunzip decompresses a gzip stream in a goroutine of its own, a few
// buffers ahead of the reader: inflating costs about as much as parsing
// the CSV it yields, and on two cores the two then overlap instead of
// adding up. Close stops the goroutine; a reader that stops early (a bad
// row) must call it.
type gunzip struct {
	name string
	full chan gzChunk // decompressed buffers, in order
	free chan []byte  // buffers to fill
	done chan struct{}

	buf []byte // the buffer being read, returned to free when read
	cur []byte // its unread part
	err error  // the error after buf, io.EOF at the end
}

type gzChunk struct {
	b   []byte
	err error
}

const (
	gzBuffers = 4
	gzBufSize = 256 << 10
)

// newGunzip reads the gzip header of r and starts decompressing the
// rest; name is used in error messages.
func newGunzip(r io.Reader, name string) (*gunzip, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, gzipError(name, err)
	}
	g := &gunzip{name: name, full: make(chan gzChunk, gzBuffers), free: make(chan []byte, gzBuffers), done: make(chan struct{})}
	for range gzBuffers {
		g.free <- make([]byte, gzBufSize)
	}
	go g.run(zr)
	return g, nil
}

func (g *gunzip) run(zr *gzip.Reader) {
	for {
		var b []byte
		select {
		case b = <-g.free:
		case <-g.done:
			return
		}
		n := 0
		var err error
		for n < len(b) && err == nil {
			var k int
			k, err = zr.Read(b[n:])
			n += k
		}
		if err != nil && !errors.Is(err, io.EOF) {
			err = gzipError(g.name, err)
		}
		select {
		case g.full <- gzChunk{b[:n], err}:
		case <-g.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read reads decompressed bytes.
func (g *gunzip) Read(p []byte) (int, error) {
	for len(g.cur) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		if g.buf != nil {
			g.free <- g.buf[:cap(g.buf)] // never blocks: free holds every buffer
			g.buf = nil
		}
		c := <-g.full
		g.buf, g.cur, g.err = c.b, c.b, c.err
	}
	n := copy(p, g.cur)
	g.cur = g.cur[n:]
	return n, nil
}

// Close stops the decompression.
func (g *gunzip) Close() { close(g.done) }

// gzipError describes a damaged or truncated gzip stream as a
// FormatError; an error of the underlying reader is kept as it is.
func gzipError(name string, err error) error {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &FormatError{File: name, Msg: "truncated gzip data (is the file complete?)"}
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader):
		return &FormatError{File: name, Msg: "damaged gzip data: " + err.Error()}
	}
	var ce flate.CorruptInputError
	if errors.As(err, &ce) {
		return &FormatError{File: name, Msg: "damaged gzip data: " + err.Error()}
	}
	return err
}
