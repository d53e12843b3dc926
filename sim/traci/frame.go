package traci

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// maxShort is the largest command length of the short form (one length
// byte, which counts itself and the id byte).
const maxShort = 255

// AppendCommand appends one command with the given id and content to dst:
// the short form (length byte, id, content) when 2+len(content) <= 255,
// otherwise the long form (0, int32 length, id, content) whose length,
// 6+len(content), counts the five header bytes and the id.
func AppendCommand(dst []byte, id byte, content []byte) []byte {
	if n := 2 + len(content); n <= maxShort {
		dst = append(dst, byte(n), id)
	} else {
		dst = append(dst, 0)
		dst = binary.BigEndian.AppendUint32(dst, uint32(6+len(content)))
		dst = append(dst, id)
	}
	return append(dst, content...)
}

// AppendMessage appends a message holding the given commands (already
// framed by AppendCommand): an int32 length that counts itself, then the
// commands.
func AppendMessage(dst []byte, commands []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(4+len(commands)))
	return append(dst, commands...)
}

func appendInt(dst []byte, v int32) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(v))
}

func appendDouble(dst []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(dst, math.Float64bits(v))
}

func appendString(dst []byte, s string) []byte {
	dst = appendInt(dst, int32(len(s)))
	return append(dst, s...)
}

// errShort is returned by the decoder when a response ends early.
var errShort = errors.New("truncated response")

// decoder reads big-endian values from a response body and remembers the
// first error, so that a sequence of reads needs one check.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) need(n int) bool {
	if d.err != nil {
		return false
	}
	if n < 0 || len(d.b)-d.off < n {
		d.err = fmt.Errorf("%w at byte %d (need %d of %d)", errShort, d.off, n, len(d.b)-d.off)
		return false
	}
	return true
}

func (d *decoder) ubyte() byte {
	if !d.need(1) {
		return 0
	}
	v := d.b[d.off]
	d.off++
	return v
}

func (d *decoder) int32() int32 {
	if !d.need(4) {
		return 0
	}
	v := int32(binary.BigEndian.Uint32(d.b[d.off:]))
	d.off += 4
	return v
}

func (d *decoder) double() float64 {
	if !d.need(8) {
		return 0
	}
	v := math.Float64frombits(binary.BigEndian.Uint64(d.b[d.off:]))
	d.off += 8
	return v
}

func (d *decoder) string() string {
	n := int(d.int32())
	if !d.need(n) {
		return ""
	}
	s := string(d.b[d.off : d.off+n])
	d.off += n
	return s
}

// equalString consumes a string and reports whether it equals s, without
// allocating.
func (d *decoder) equalString(s string) bool {
	n := int(d.int32())
	if !d.need(n) {
		return false
	}
	ok := string(d.b[d.off:d.off+n]) == s
	d.off += n
	return ok
}

func (d *decoder) stringList() []string {
	n := int(d.int32())
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b)-d.off { // each string takes at least 4 bytes
		d.err = fmt.Errorf("%w: string list of %d items", errShort, n)
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.string()
	}
	return out
}

// command reads a command header in either form and returns the command's
// id and the offset just past its end.
func (d *decoder) command() (id byte, end int) {
	start := d.off
	n := int(d.ubyte())
	if n == 0 {
		n = int(d.int32())
		if d.err == nil && n < 6 {
			d.err = fmt.Errorf("long command length %d at byte %d", n, start)
		}
	} else if n < 2 {
		d.err = fmt.Errorf("command length %d at byte %d", n, start)
	}
	id = d.ubyte()
	end = start + n
	if d.err == nil && end > len(d.b) {
		d.err = fmt.Errorf("%w: command 0x%02x of %d bytes at byte %d, %d left", errShort, id, n, start, len(d.b)-start)
	}
	return id, end
}

// status reads a status response for command cmd. A result other than OK
// is returned as an *Error carrying SUMO's message.
func (d *decoder) status(cmd byte) error {
	id, end := d.command()
	result := d.ubyte()
	msg := d.string()
	if d.err != nil {
		return d.err
	}
	if d.off != end {
		d.err = fmt.Errorf("status of command 0x%02x: %d bytes left over", cmd, end-d.off)
		return d.err
	}
	if id != cmd {
		d.err = fmt.Errorf("status for command 0x%02x, want 0x%02x", id, cmd)
		return d.err
	}
	if result != StatusOK {
		return &Error{Command: cmd, Status: result, Message: msg}
	}
	return nil
}

// Error is a status response other than OK: SUMO refused or failed a
// command. Message is SUMO's own text; Object and Variable name what the
// command was about, when it was about an object.
type Error struct {
	Command  byte
	Variable byte
	Object   string
	Status   byte
	Message  string
}

func (e *Error) Error() string {
	what := "error"
	switch e.Status {
	case StatusNotImplemented:
		what = "not implemented"
	case StatusError:
	default:
		what = fmt.Sprintf("status 0x%02x", e.Status)
	}
	about := ""
	if e.Object != "" {
		about = fmt.Sprintf(" (variable 0x%02x of %q)", e.Variable, e.Object)
	}
	return fmt.Sprintf("traci: command 0x%02x%s: sumo %s: %s", e.Command, about, what, e.Message)
}
