package traci_test

import (
	"fmt"
	"strings"

	"github.com/ihope-ope/ihope/sim/traci"
)

// Commands are framed in the short form up to 255 bytes and in the long
// form beyond.
func ExampleAppendCommand() {
	short := traci.AppendCommand(nil, traci.CmdSimStep, []byte{0x40, 0x59, 0, 0, 0, 0, 0, 0}) // step to 100 s
	fmt.Printf("% x\n", short)
	long := traci.AppendCommand(nil, 0x42, []byte(strings.Repeat("x", 300)))
	fmt.Printf("% x ... (%d bytes)\n", long[:6], len(long))
	fmt.Printf("% x\n", traci.AppendMessage(nil, traci.AppendCommand(nil, traci.CmdGetVersion, nil)))
	// Output:
	// 0a 02 40 59 00 00 00 00 00 00
	// 00 00 00 01 32 42 ... (306 bytes)
	// 00 00 00 06 02 00
}
