package traci

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"time"
)

// memConn is a net.Conn that discards writes and answers every message
// with the next of a cycle of canned replies, without a goroutine or a
// system call, so that a benchmark over it measures the client's own work.
type memConn struct {
	replies [][]byte
	next    int
	pending []byte
}

func (c *memConn) Write(b []byte) (int, error) {
	c.pending = c.replies[c.next%len(c.replies)]
	c.next++
	return len(b), nil
}

func (c *memConn) Read(b []byte) (int, error) {
	n := copy(b, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

func (c *memConn) Close() error                     { return nil }
func (c *memConn) LocalAddr() net.Addr              { return nil }
func (c *memConn) RemoteAddr() net.Addr             { return nil }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

func longCommand(id byte, content []byte) []byte {
	b := []byte{0}
	b = binary.BigEndian.AppendUint32(b, uint32(6+len(content)))
	b = append(b, id)
	return append(b, content...)
}

// rlStepReplies returns SUMO's answers to one changing step of sim/sumo's
// single intersection: the set-phase status, then the step's status with
// the 12 detector counts and the light's phase.
func rlStepReplies() (set, step []byte) {
	set = AppendMessage(nil, []byte{7, CmdSetTLVariable, StatusOK, 0, 0, 0, 0})
	body := []byte{7, CmdSimStep, StatusOK, 0, 0, 0, 0}
	body = appendInt(body, 13)
	for k := range 12 {
		c := appendString(nil, fmt.Sprintf("J00_%c_%d", "NESW"[k/3], k%3))
		c = append(c, 1, VarLastStepVehicleNumber, StatusOK, TypeInteger)
		c = appendInt(c, int32(k))
		body = append(body, longCommand(CmdSubscribeLaneAreaVariable+responseOffset, c)...)
	}
	c := appendString(nil, "J00")
	c = append(c, 1, VarCurrentPhase, StatusOK, TypeInteger)
	c = appendInt(c, 2)
	body = append(body, longCommand(CmdSubscribeTLVariable+responseOffset, c)...)
	return set, AppendMessage(nil, body)
}

// BenchmarkClientStep measures the client's work for one reinforcement-
// learning step of sim/sumo on one light that changes phase (the costlier
// case): encode a set-phase message and a step message, and decode the
// step's 13 subscription results. No network is involved: compare with
// BenchmarkSimStep in sim/sumo (a whole step with SUMO) for the client's
// share of the step time.
func BenchmarkClientStep(b *testing.B) {
	set, step := rlStepReplies()
	c := NewClient(&memConn{replies: [][]byte{set, step}})
	counts := make([]int, 12)
	var phase int
	subs := c.NewBatch()
	for k := range 12 {
		subs.subscribeNoSend(CmdSubscribeLaneAreaVariable, fmt.Sprintf("J00_%c_%d", "NESW"[k/3], k%3), VarLastStepVehicleNumber, &counts[k])
	}
	subs.subscribeNoSend(CmdSubscribeTLVariable, "J00", VarCurrentPhase, &phase)
	batch := c.NewBatch()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		batch.SetPhase("J00", 5)
		batch.Step(float64(6 * i))
		if err := batch.Do(); err != nil {
			b.Fatal(err)
		}
	}
	if counts[11] != 11 || phase != 2 {
		b.Fatalf("decoded counts %v phase %d", counts, phase)
	}
}

// subscribeNoSend registers a subscription without asking SUMO (for the
// benchmark's canned answers).
func (b *Batch) subscribeNoSend(cmd byte, obj string, varID byte, dst *int) {
	if b.c.subs == nil {
		b.c.subs = make(map[subKey]*subscription)
	}
	b.c.subs[subKey{cmd + responseOffset, obj}] = &subscription{vars: []byte{varID}, dst: []*int{dst}}
}

// BenchmarkRoundTrip measures one get-time round trip with real SUMO: the
// loopback transport and SUMO's dispatch, the floor of any TraCI call.
func BenchmarkRoundTrip(b *testing.B) {
	if _, err := LookPath(""); err != nil {
		b.Skip(err.Error())
	}
	_, args := tinyNet(b)
	p, err := Start(context.Background(), Options{Args: args})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for b.Loop() {
		if _, err := p.Time(); err != nil {
			b.Fatal(err)
		}
	}
}
