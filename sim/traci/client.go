package traci

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
)

// maxMessage bounds the length of a response message SUMO may announce
// (64 MiB); a larger length means a desynchronised stream.
const maxMessage = 64 << 20

// Client is a TraCI connection. Its methods send one command and wait for
// the answer; a Batch sends many commands in one round trip. A Client is
// not safe for concurrent use.
type Client struct {
	conn net.Conn
	rd   *bufio.Reader
	out  []byte
	in   []byte
	one  Batch
	// broken is the I/O or protocol error after which the stream can no
	// longer be trusted; every later call returns it.
	broken error
	closed bool
	// decorate adds context to I/O errors (a Process appends SUMO's exit
	// status and last output).
	decorate func(error) error
	// subs maps a subscription response id and object to the variables
	// whose values every step reports.
	subs map[subKey]*subscription
}

type subKey struct {
	resp byte
	obj  string
}

type subscription struct {
	vars []byte
	dst  []*int
}

// NewClient returns a client speaking TraCI over conn.
func NewClient(conn net.Conn) *Client {
	c := &Client{conn: conn, rd: bufio.NewReaderSize(conn, 32<<10)}
	c.one.c = c
	return c
}

// Dial connects to a TraCI server at addr ("host:port") once.
func Dial(ctx context.Context, addr string) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("traci: %w", err)
	}
	return NewClient(conn), nil
}

// NewBatch returns an empty batch of commands for c. A batch may be
// reused after Do.
func (c *Client) NewBatch() *Batch { return &Batch{c: c} }

// Version returns the TraCI API version and SUMO's identifier string
// (command 0x00).
func (c *Client) Version() (api int, id string, err error) {
	c.one.Version(&api, &id)
	err = c.one.Do()
	return api, id, err
}

// Step advances the simulation until time t in seconds; t = 0 performs
// exactly one step, and a t not after the current time does nothing
// (command 0x02).
func (c *Client) Step(t float64) error {
	c.one.Step(t)
	return c.one.Do()
}

// Time returns the current simulation time in seconds.
func (c *Client) Time() (float64, error) {
	var t float64
	c.one.Time(&t)
	err := c.one.Do()
	return t, err
}

// LaneAreaVehicleNumber returns the number of vehicles on lane-area (E2)
// detector det in the last simulation step (command 0xad, variable 0x10).
func (c *Client) LaneAreaVehicleNumber(det string) (int, error) {
	var n int
	c.one.LaneAreaVehicleNumber(det, &n)
	err := c.one.Do()
	return n, err
}

// LaneAreaIDs returns the ids of all lane-area detectors.
func (c *Client) LaneAreaIDs() ([]string, error) {
	var ids []string
	c.one.GetStringList(CmdGetLaneAreaVariable, VarIDList, "", &ids)
	err := c.one.Do()
	return ids, err
}

// TrafficLightIDs returns the ids of all traffic lights.
func (c *Client) TrafficLightIDs() ([]string, error) {
	var ids []string
	c.one.GetStringList(CmdGetTLVariable, VarIDList, "", &ids)
	err := c.one.Do()
	return ids, err
}

// Phase returns the index of the current phase of traffic light tls
// (command 0xa2, variable 0x28).
func (c *Client) Phase(tls string) (int, error) {
	var p int
	c.one.Phase(tls, &p)
	err := c.one.Do()
	return p, err
}

// SetPhase switches traffic light tls to the given phase of its current
// program; the phase then lasts its programmed duration (command 0xc2,
// variable 0x22).
func (c *Client) SetPhase(tls string, phase int) error {
	c.one.SetPhase(tls, phase)
	return c.one.Do()
}

// RedYellowGreenState returns the signal state string of traffic light
// tls, one character per controlled link.
func (c *Client) RedYellowGreenState(tls string) (string, error) {
	var s string
	c.one.GetString(CmdGetTLVariable, VarRedYellowGreenState, tls, &s)
	err := c.one.Do()
	return s, err
}

// Close asks SUMO to end the simulation and close the connection
// (command 0x7f), then closes the socket. It is safe to call twice.
func (c *Client) Close() error {
	if c.closed {
		return nil
	}
	var err error
	if c.broken == nil {
		c.one.reset()
		c.one.add(pending{cmd: CmdClose, kind: kindStatus}, nil)
		err = c.one.Do()
	}
	c.closed = true
	if cerr := c.conn.Close(); err == nil && cerr != nil && !errors.Is(cerr, net.ErrClosed) {
		err = fmt.Errorf("traci: close: %w", cerr)
	}
	return err
}

// roundTrip sends the commands as one message and returns the body of
// the answer (without its length field). The returned slice is valid
// until the next round trip.
func (c *Client) roundTrip(commands []byte) ([]byte, error) {
	if c.closed {
		return nil, errors.New("traci: connection closed")
	}
	if c.broken != nil {
		return nil, c.broken
	}
	c.out = AppendMessage(c.out[:0], commands)
	if _, err := c.conn.Write(c.out); err != nil {
		return nil, c.fail(fmt.Errorf("traci: send: %w", err))
	}
	var hdr [4]byte
	if _, err := io.ReadFull(c.rd, hdr[:]); err != nil {
		return nil, c.fail(fmt.Errorf("traci: receive: %w", err))
	}
	n := int(binary.BigEndian.Uint32(hdr[:]))
	if n < 4 || n > maxMessage {
		return nil, c.fail(fmt.Errorf("traci: receive: message length %d", n))
	}
	if cap(c.in) < n-4 {
		c.in = make([]byte, n-4)
	}
	c.in = c.in[:n-4]
	if _, err := io.ReadFull(c.rd, c.in); err != nil {
		return nil, c.fail(fmt.Errorf("traci: receive %d bytes: %w", n, err))
	}
	return c.in, nil
}

// fail marks the stream broken and returns err with the decoration.
func (c *Client) fail(err error) error {
	if c.decorate != nil {
		err = c.decorate(err)
	}
	c.broken = err
	return err
}

type kind uint8

const (
	kindStatus kind = iota // no result beyond the status
	kindStep
	kindVersion
	kindInt
	kindDouble
	kindString
	kindStringList
	kindSubscribe
)

// pending is a command whose answer a Batch awaits.
type pending struct {
	cmd   byte
	kind  kind
	varID byte
	obj   string
	i     *int
	f     *float64
	s     *string
	ss    *[]string
	sub   *subscription
}

// Batch collects commands and sends them with Do in as few round trips as
// SUMO allows (see Do). Results are written through the pointers given
// when the commands were added, by the time Do returns.
type Batch struct {
	c       *Client
	cmds    []byte
	content []byte
	want    []pending
}

// Len returns the number of commands waiting to be sent.
func (b *Batch) Len() int { return len(b.want) }

func (b *Batch) reset() {
	b.cmds, b.want = b.cmds[:0], b.want[:0]
}

// add frames the command whose content is b.content[:] (built by the
// caller after a call to begin) and records what its answer holds.
func (b *Batch) add(p pending, content []byte) {
	b.cmds = AppendCommand(b.cmds, p.cmd, content)
	b.want = append(b.want, p)
}

func (b *Batch) begin() []byte { return b.content[:0] }

// Version asks for the API version and SUMO's identifier.
func (b *Batch) Version(api *int, id *string) {
	b.add(pending{cmd: CmdGetVersion, kind: kindVersion, i: api, s: id}, nil)
}

// Step advances the simulation until time t in seconds (0: one step).
func (b *Batch) Step(t float64) {
	b.content = appendDouble(b.begin(), t)
	b.add(pending{cmd: CmdSimStep, kind: kindStep}, b.content)
}

// Time asks for the simulation time in seconds.
func (b *Batch) Time(dst *float64) { b.GetDouble(CmdGetSimVariable, VarTime, "", dst) }

// LaneAreaVehicleNumber asks for the number of vehicles on lane-area
// detector det in the last step.
func (b *Batch) LaneAreaVehicleNumber(det string, dst *int) {
	b.GetInt(CmdGetLaneAreaVariable, VarLastStepVehicleNumber, det, dst)
}

// Phase asks for the current phase index of traffic light tls.
func (b *Batch) Phase(tls string, dst *int) { b.GetInt(CmdGetTLVariable, VarCurrentPhase, tls, dst) }

// SetPhase switches traffic light tls to a phase of its program.
func (b *Batch) SetPhase(tls string, phase int) {
	b.SetInt(CmdSetTLVariable, VarPhaseIndex, tls, phase)
}

func (b *Batch) get(p pending) {
	c := append(b.begin(), p.varID)
	b.content = appendString(c, p.obj)
	b.add(p, b.content)
}

// GetInt asks for an int variable (type 0x09) of object obj in the domain
// of get command cmd (0xa0-0xaf).
func (b *Batch) GetInt(cmd, varID byte, obj string, dst *int) {
	b.get(pending{cmd: cmd, kind: kindInt, varID: varID, obj: obj, i: dst})
}

// GetDouble asks for a double variable (type 0x0b).
func (b *Batch) GetDouble(cmd, varID byte, obj string, dst *float64) {
	b.get(pending{cmd: cmd, kind: kindDouble, varID: varID, obj: obj, f: dst})
}

// GetString asks for a string variable (type 0x0c).
func (b *Batch) GetString(cmd, varID byte, obj string, dst *string) {
	b.get(pending{cmd: cmd, kind: kindString, varID: varID, obj: obj, s: dst})
}

// GetStringList asks for a string-list variable (type 0x0e).
func (b *Batch) GetStringList(cmd, varID byte, obj string, dst *[]string) {
	b.get(pending{cmd: cmd, kind: kindStringList, varID: varID, obj: obj, ss: dst})
}

// SetInt sets an int variable of object obj with set command cmd
// (0xc0-0xcf).
func (b *Batch) SetInt(cmd, varID byte, obj string, v int) {
	c := append(b.begin(), varID)
	c = appendString(c, obj)
	c = append(c, TypeInteger)
	b.content = appendInt(c, int32(v))
	b.add(pending{cmd: cmd, kind: kindStatus, varID: varID, obj: obj}, b.content)
}

// SetString sets a string variable of object obj with set command cmd.
func (b *Batch) SetString(cmd, varID byte, obj string, v string) {
	c := append(b.begin(), varID)
	c = appendString(c, obj)
	c = append(c, TypeString)
	b.content = appendString(c, v)
	b.add(pending{cmd: cmd, kind: kindStatus, varID: varID, obj: obj}, b.content)
}

// Do sends the batch, decodes every answer and empties the batch. The
// commands go in as few messages as SUMO allows: SUMO 1.15 answers a
// message that holds a simulation step with the step's answer alone (the
// answers of the commands before it are dropped and those after it run
// before the step), so every step travels in a message of its own and the
// commands between two steps share one. If SUMO refuses some commands (a
// status other than OK), the others still take effect and Do returns the
// first refusal, an *Error naming the command's object. A broken
// connection or a malformed answer is returned as is and leaves the
// client unusable.
func (b *Batch) Do() error {
	defer b.reset()
	var first error
	off, i := 0, 0
	for i < len(b.want) {
		// One message: a step alone, or the commands up to the next step.
		j, end := i+1, b.next(off)
		if b.want[i].cmd != CmdSimStep {
			for j < len(b.want) && b.want[j].cmd != CmdSimStep {
				end = b.next(end)
				j++
			}
		}
		err := b.send(b.cmds[off:end], b.want[i:j])
		var te *Error
		if err != nil && !errors.As(err, &te) {
			return err
		}
		if first == nil {
			first = err
		}
		i, off = j, end
	}
	return first
}

// next returns the offset just past the framed command starting at off.
func (b *Batch) next(off int) int {
	if n := int(b.cmds[off]); n > 0 {
		return off + n
	}
	return off + int(binary.BigEndian.Uint32(b.cmds[off+1:]))
}

// send makes one round trip with the given framed commands.
func (b *Batch) send(cmds []byte, want []pending) error {
	body, err := b.c.roundTrip(cmds)
	if err != nil {
		return err
	}
	d := decoder{b: body}
	var first error
	for k := range want {
		p := &want[k]
		if err := d.status(p.cmd); err != nil {
			if d.err != nil {
				return b.c.fail(fmt.Errorf("traci: answer to command 0x%02x: %w", p.cmd, d.err))
			}
			if first == nil {
				first = p.wrap(err)
			}
			continue
		}
		err := p.decode(&d, b.c)
		var te *Error
		if errors.As(err, &te) {
			if first == nil {
				first = p.wrap(err)
			}
			continue
		}
		if err != nil {
			return b.c.fail(fmt.Errorf("traci: answer to command 0x%02x: %w", p.cmd, err))
		}
	}
	if d.off != len(body) {
		return b.c.fail(fmt.Errorf("traci: %d bytes left after %d answers", len(body)-d.off, len(want)))
	}
	return first
}

// wrap adds the command's object and variable to a refusal.
func (p *pending) wrap(err error) error {
	if e, ok := err.(*Error); ok && e.Object == "" && p.obj != "" {
		e.Object, e.Variable = p.obj, p.varID
	}
	return err
}

// decode reads the result that follows an OK status.
func (p *pending) decode(d *decoder, c *Client) error {
	switch p.kind {
	case kindStatus:
		return nil
	case kindStep:
		// The step answers with the subscription results of the step.
		n := int(d.int32())
		var first error
		for k := 0; k < n && d.err == nil; k++ {
			if err := d.subscriptionResult(c); err != nil && first == nil {
				first = err
			}
		}
		if d.err != nil {
			return d.err
		}
		return first
	case kindSubscribe:
		if c.subs == nil {
			c.subs = make(map[subKey]*subscription)
		}
		c.subs[subKey{p.cmd + responseOffset, p.obj}] = p.sub
		return d.subscriptionResult(c)
	case kindVersion:
		id, end := d.command()
		api := d.int32()
		s := d.string()
		if d.err != nil {
			return d.err
		}
		if id != CmdGetVersion || d.off != end {
			return fmt.Errorf("malformed version response (id 0x%02x)", id)
		}
		*p.i, *p.s = int(api), s
		return nil
	}
	id, end := d.command()
	varID := d.ubyte()
	sameObj := d.equalString(p.obj)
	typ := d.ubyte()
	if d.err != nil {
		return d.err
	}
	if id != p.cmd+responseOffset || varID != p.varID || !sameObj {
		return fmt.Errorf("response 0x%02x variable 0x%02x does not answer 0x%02x variable 0x%02x of %q",
			id, varID, p.cmd, p.varID, p.obj)
	}
	if want := p.kind.valueType(); typ != want {
		return fmt.Errorf("variable 0x%02x of %q has type 0x%02x, want 0x%02x", p.varID, p.obj, typ, want)
	}
	switch p.kind {
	case kindInt:
		*p.i = int(d.int32())
	case kindDouble:
		*p.f = d.double()
	case kindString:
		*p.s = d.string()
	case kindStringList:
		*p.ss = d.stringList()
	}
	if d.err != nil {
		return d.err
	}
	if d.off != end {
		return fmt.Errorf("response to 0x%02x: %d bytes left over", p.cmd, end-d.off)
	}
	return nil
}

// valueType is the type tag of the value a get command of this kind reads.
func (k kind) valueType() byte {
	switch k {
	case kindInt:
		return TypeInteger
	case kindDouble:
		return TypeDouble
	case kindString:
		return TypeString
	case kindStringList:
		return TypeStringList
	}
	return 0
}

// invalidTime is TraCI's INVALID_DOUBLE_VALUE; as the begin and end of a
// subscription it means "from now on, for ever".
const invalidTime = -1073741824.0

// SubscribeInts subscribes to int variables of object obj with subscribe
// command cmd (0xd0-0xdf, e.g. 0xdd for lane-area detectors): after every
// later step, *dst[i] holds variable vars[i] of the step just simulated,
// at no extra round trip. The values of the time of the call are written
// too. A new subscription to the same object replaces the old one, as in
// SUMO.
func (b *Batch) SubscribeInts(cmd byte, obj string, vars []byte, dst []*int) {
	if len(vars) != len(dst) || len(vars) == 0 || len(vars) > 255 {
		panic(fmt.Sprintf("traci: subscribe to %d variables with %d destinations", len(vars), len(dst)))
	}
	c := appendDouble(b.begin(), invalidTime)
	c = appendDouble(c, invalidTime)
	c = appendString(c, obj)
	c = append(c, byte(len(vars)))
	b.content = append(c, vars...)
	sub := &subscription{vars: append([]byte(nil), vars...), dst: append([]*int(nil), dst...)}
	b.add(pending{cmd: cmd, kind: kindSubscribe, obj: obj, sub: sub}, b.content)
}

// SubscribeLaneAreaVehicleNumber subscribes to the vehicle count of
// lane-area detector det (command 0xdd, variable 0x10).
func (b *Batch) SubscribeLaneAreaVehicleNumber(det string, dst *int) {
	b.SubscribeInts(CmdSubscribeLaneAreaVariable, det, []byte{VarLastStepVehicleNumber}, []*int{dst})
}

// SubscribePhase subscribes to the current phase of traffic light tls
// (command 0xd2, variable 0x28).
func (b *Batch) SubscribePhase(tls string, dst *int) {
	b.SubscribeInts(CmdSubscribeTLVariable, tls, []byte{VarCurrentPhase}, []*int{dst})
}

// subscriptionResult reads one variable-subscription response (the answer
// to a subscribe command, or one of a step's results) and writes the
// values of a known subscription. A variable SUMO could
// not read is returned as an *Error.
func (d *decoder) subscriptionResult(c *Client) error {
	id, end := d.command()
	n := int(d.int32())
	if !d.need(n) {
		return d.err
	}
	objBytes := d.b[d.off : d.off+n]
	d.off += n
	sub := c.subs[subKey{id, string(objBytes)}]
	nv := int(d.ubyte())
	var first error
	for k := 0; k < nv && d.err == nil; k++ {
		varID, status, typ := d.ubyte(), d.ubyte(), d.ubyte()
		if d.err != nil {
			break
		}
		if status != StatusOK {
			msg := d.string()
			if first == nil {
				first = &Error{Command: id, Variable: varID, Object: string(objBytes), Status: status, Message: msg}
			}
			continue
		}
		if typ != TypeInteger {
			// Only int subscriptions are made by this client; a value
			// of another type cannot be skipped without its layout.
			d.err = fmt.Errorf("subscription to %q: variable 0x%02x has type 0x%02x, want int", objBytes, varID, typ)
			break
		}
		v := int(d.int32())
		if sub != nil {
			for i, w := range sub.vars {
				if w == varID {
					*sub.dst[i] = v
				}
			}
		}
	}
	if d.err != nil {
		return d.err
	}
	if d.off != end {
		return fmt.Errorf("subscription response for %q: %d bytes left over", objBytes, end-d.off)
	}
	return first
}
