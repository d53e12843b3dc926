package traci

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The expected bytes are messages sent by this client to SUMO 1.15.0 and
// checked by SUMO's answers (testdata/sumo-1.15.0.transcript).
func TestAppendCommand(t *testing.T) {
	long := strings.Repeat("d", 300)
	for i, tc := range []struct {
		id      byte
		content []byte
		want    string
	}{
		// getVersion: no content, short form.
		{CmdGetVersion, nil, "02 00"},
		// simulationStep(100): a raw double.
		{CmdSimStep, appendDouble(nil, 100), "0a 02 4059000000000000"},
		// lane-area vehicle number of "N2C_0".
		{CmdGetLaneAreaVariable, appendString([]byte{VarLastStepVehicleNumber}, "N2C_0"), "0c ad 10 00000005 4e32435f30"},
		// The largest short command: 253 bytes of content.
		{0x42, bytes.Repeat([]byte{7}, 253), "ff 42" + strings.Repeat("07", 253)},
		// One more byte takes the long form: 0, int32 6+254, id.
		{0x42, bytes.Repeat([]byte{7}, 254), "00 00000104 42" + strings.Repeat("07", 254)},
		// A detector id of 300 characters: 0, int32 311, 0xad.
		{CmdGetLaneAreaVariable, appendString([]byte{VarLastStepVehicleNumber}, long),
			"00 00000137 ad 10 0000012c" + strings.Repeat("64", 300)},
	} {
		got := AppendCommand(nil, tc.id, tc.content)
		if want := unhex(t, tc.want); !bytes.Equal(got, want) {
			t.Errorf("case %d: got %x\nwant %x", i, got, want)
		}
	}
	msg := AppendMessage(nil, AppendCommand(nil, CmdGetVersion, nil))
	if want := unhex(t, "00000006 0200"); !bytes.Equal(msg, want) {
		t.Errorf("message %x, want %x", msg, want)
	}
}

func TestDecodeCommandForms(t *testing.T) {
	for i, tc := range []struct {
		body    string
		id      byte
		end     int
		wantErr bool
	}{
		{"07 02 00 00000000", 0x02, 7, false},
		// Long form as SUMO writes subscription results: 0, int32 23, 0xed.
		{"00 00000017 ed" + strings.Repeat("00", 17), 0xed, 23, false},
		{"01 02", 0, 0, true},          // a length below 2
		{"00 00000005 ed", 0, 0, true}, // a long length below 6
		{"09 02 00", 0, 0, true},       // longer than the body
		{"00 0000", 0, 0, true},        // truncated length
	} {
		d := decoder{b: unhex(t, tc.body)}
		id, end := d.command()
		if tc.wantErr {
			if d.err == nil {
				t.Errorf("case %d: no error", i)
			}
			continue
		}
		if d.err != nil || id != tc.id || end != tc.end {
			t.Errorf("case %d: id 0x%02x end %d err %v, want 0x%02x %d", i, id, end, d.err, tc.id, tc.end)
		}
	}
}

func TestStatus(t *testing.T) {
	// SUMO's refusal of an unknown detector, as recorded.
	body := unhex(t, "30 ad ff 00000029"+hex.EncodeToString([]byte("Lane area detector 'unknown' is not known")))
	d := decoder{b: body}
	err := d.status(CmdGetLaneAreaVariable)
	var te *Error
	if !errors.As(err, &te) || d.err != nil {
		t.Fatalf("got %v (decoder %v), want an *Error", err, d.err)
	}
	if te.Status != StatusError || te.Message != "Lane area detector 'unknown' is not known" || te.Command != 0xad {
		t.Errorf("got %+v", te)
	}
	if got, want := te.Error(), "traci: command 0xad: sumo error: Lane area detector 'unknown' is not known"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	// A status for another command is a protocol error.
	d = decoder{b: unhex(t, "07 02 00 00000000")}
	if err := d.status(CmdGetVersion); err == nil || d.err == nil {
		t.Errorf("status of 0x02 accepted for 0x00: %v", err)
	}
	// Left-over bytes inside a status.
	d = decoder{b: unhex(t, "08 02 00 00000000 00")}
	if err := d.status(CmdSimStep); err == nil || d.err == nil {
		t.Errorf("status with a spare byte accepted: %v", err)
	}
	// Not implemented.
	d = decoder{b: unhex(t, "07 99 01 00000000")}
	if err := d.status(0x99); err == nil || !strings.Contains(err.Error(), "not implemented") {
		t.Errorf("not implemented: %v", err)
	}
}
