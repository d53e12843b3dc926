package traci

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
)

// exchange is one request message and SUMO's answer.
type exchange struct {
	what          string
	request, want []byte
}

// readTranscript parses testdata/sumo-1.15.0.transcript: "# what" starts
// an exchange, "> hex" is what the client wrote, "< hex" what SUMO
// answered. It was recorded by wrapping this client's connection to SUMO
// 1.15.0 (Debian bookworm) running a single intersection with lane-area
// detectors N2C_0, N2C_1 and one whose id is 300 "d"s.
func readTranscript(t *testing.T) []exchange {
	t.Helper()
	f, err := os.Open("testdata/sumo-1.15.0.transcript")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []exchange
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "# ") {
			out = append(out, exchange{what: line[2:]})
			continue
		}
		b, err := hex.DecodeString(line[2:])
		if err != nil || len(out) == 0 {
			t.Fatalf("bad transcript line %q: %v", line, err)
		}
		e := &out[len(out)-1]
		switch line[0] {
		case '>':
			e.request = append(e.request, b...)
		case '<':
			e.want = append(e.want, b...)
		}
	}
	return out
}

// replay serves the recorded answers on one end of a pipe, checking that
// every request equals the recorded one, and reports mismatches on errc.
func replay(t *testing.T, conn net.Conn, ex []exchange, errc chan<- error) {
	defer conn.Close()
	for _, e := range ex {
		var hdr [4]byte
		if _, err := io.ReadFull(conn, hdr[:]); err != nil {
			errc <- err
			return
		}
		req := make([]byte, binary.BigEndian.Uint32(hdr[:]))
		copy(req, hdr[:])
		if _, err := io.ReadFull(conn, req[4:]); err != nil {
			errc <- err
			return
		}
		if !bytes.Equal(req, e.request) {
			errc <- errors.New(e.what + ": request " + hex.EncodeToString(req) + ", recorded " + hex.EncodeToString(e.request))
			return
		}
		if _, err := conn.Write(e.want); err != nil {
			errc <- err
			return
		}
	}
	errc <- nil
}

func TestClientReplaysRecordedSession(t *testing.T) {
	ex := readTranscript(t)
	if len(ex) != 12 {
		t.Fatalf("transcript has %d exchanges, want 12", len(ex))
	}
	cs, ss := net.Pipe()
	errc := make(chan error, 1)
	go replay(t, ss, ex, errc)
	c := NewClient(cs)

	api, ident, err := c.Version()
	if err != nil || api != 20 || ident != "SUMO 1.15.0" {
		t.Fatalf("Version = %d, %q, %v; want 20, SUMO 1.15.0", api, ident, err)
	}
	if err := c.Step(100); err != nil {
		t.Fatal(err)
	}
	if n, err := c.LaneAreaVehicleNumber("N2C_0"); n != 0 || err != nil {
		t.Errorf("N2C_0 = %d, %v; want 0", n, err)
	}
	if p, err := c.Phase("C"); p != 0 || err != nil {
		t.Errorf("Phase = %d, %v; want 0", p, err)
	}
	// Subscriptions: the answer (long-form results) gives the current values.
	n1, ph := -1, -1
	b := c.NewBatch()
	b.SubscribeLaneAreaVehicleNumber("N2C_1", &n1)
	b.SubscribePhase("C", &ph)
	if err := b.Do(); err != nil || n1 != 1 || ph != 0 {
		t.Fatalf("subscribe: n1 %d phase %d %v; want 1 0", n1, ph, err)
	}
	if err := c.SetPhase("C", 5); err != nil {
		t.Fatal(err)
	}
	// The step's answer carries both subscriptions: yellow phase 5 has
	// handed over to its next phase, 2, after 3 s.
	if err := c.Step(106); err != nil || n1 != 0 || ph != 2 {
		t.Fatalf("step: n1 %d phase %d %v; want 0 2", n1, ph, err)
	}
	// Long form both ways: a 300-character id.
	if n, err := c.LaneAreaVehicleNumber(strings.Repeat("d", 300)); n != 3 || err != nil {
		t.Errorf("long id = %d, %v; want 3", n, err)
	}
	// Refusals carry SUMO's message and leave the connection usable.
	_, err = c.LaneAreaVehicleNumber("unknown")
	var te *Error
	if !errors.As(err, &te) || te.Message != "Lane area detector 'unknown' is not known" || te.Object != "unknown" || te.Variable != 0x10 {
		t.Errorf("unknown detector: %v", err)
	}
	err = c.SetPhase("C", 99)
	if want := `traci: command 0xc2 (variable 0x22 of "C"): sumo error: The phase index 99 is not in the allowed range [0,15].`; err == nil || err.Error() != want {
		t.Errorf("SetPhase(99) = %v\nwant %s", err, want)
	}
	if now, err := c.Time(); now != 106 || err != nil {
		t.Errorf("Time = %v, %v; want 106", now, err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := c.Step(0); err == nil {
		t.Error("Step after Close succeeded")
	}
}

// fakeServer answers every request with the next canned reply.
func fakeServer(conn net.Conn, replies ...string) {
	defer conn.Close()
	for _, r := range replies {
		var hdr [4]byte
		if _, err := io.ReadFull(conn, hdr[:]); err != nil {
			return
		}
		io.CopyN(io.Discard, conn, int64(binary.BigEndian.Uint32(hdr[:])-4))
		b, _ := hex.DecodeString(strings.ReplaceAll(r, " ", ""))
		conn.Write(b)
	}
}

func TestClientRejectsMalformedAnswers(t *testing.T) {
	for i, tc := range []struct {
		reply string
		want  string
	}{
		{"00000003", "message length 3"},
		{"0000000b 07 ab 00 00000000", "truncated"},                          // no result after the status
		{"0000000b 07 a2 00 00000000", "status for command 0xa2, want 0xab"}, // answer to another command
		{"0000001b 07ab000000000010 bd 66000000000b 405a800000000000", "does not answer"},
		{"0000001b 07ab000000000010 bb 66000000000c 405a800000000000", "type 0x0c, want 0x0b"},
		{"0000001c 07ab000000000010 bb 66000000000b 405a800000000000 00", "left after"},
		{"", "EOF"},
	} {
		cs, ss := net.Pipe()
		go fakeServer(ss, tc.reply)
		c := NewClient(cs)
		_, err := c.Time()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("case %d: error %v, want %q", i, err, tc.want)
		}
		// The stream is no longer trusted.
		if _, err2 := c.Time(); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("case %d: second call %v, want the first error again", i, err2)
		}
		c.Close()
	}
}

func TestBatchSplitsAtSteps(t *testing.T) {
	// set, get | step | get: three messages, as SUMO answers a step alone.
	cs, ss := net.Pipe()
	got := make(chan []int, 1)
	go func() {
		defer ss.Close()
		var sizes []int
		replies := []string{
			"00000022 07c20000000000 07ab000000000010bb66000000000b4000000000000000",
			"0000000f 0702000000000000000000",
			"0000001b 07ab000000000010bb66000000000b4008000000000000",
		}
		for _, r := range replies {
			var hdr [4]byte
			if _, err := io.ReadFull(ss, hdr[:]); err != nil {
				break
			}
			n := binary.BigEndian.Uint32(hdr[:])
			sizes = append(sizes, int(n))
			io.CopyN(io.Discard, ss, int64(n-4))
			b, _ := hex.DecodeString(strings.ReplaceAll(r, " ", ""))
			ss.Write(b)
		}
		got <- sizes
	}()
	c := NewClient(cs)
	b := c.NewBatch()
	var t0, t1 float64
	b.SetPhase("C", 1)
	b.Time(&t0)
	b.Step(3)
	b.Time(&t1)
	if b.Len() != 4 {
		t.Fatalf("Len = %d", b.Len())
	}
	if err := b.Do(); err != nil {
		t.Fatal(err)
	}
	if t0 != 2 || t1 != 3 {
		t.Errorf("times %v %v, want 2 3", t0, t1)
	}
	if b.Len() != 0 {
		t.Errorf("batch not emptied: %d", b.Len())
	}
	cs.Close()
	// 4 + (13 set + 7 get), 4 + 10 step, 4 + 7 get.
	if sizes := <-got; len(sizes) != 3 || sizes[0] != 24 || sizes[1] != 14 || sizes[2] != 11 {
		t.Errorf("message sizes %v, want [24 14 11]", sizes)
	}
}
