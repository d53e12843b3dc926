package traci

// Command ids (TraCIConstants.h of SUMO 1.15; TraCI API version 20).
const (
	CmdGetVersion = 0x00
	CmdSimStep    = 0x02
	CmdClose      = 0x7f

	CmdGetTLVariable       = 0xa2
	CmdGetSimVariable      = 0xab
	CmdGetLaneAreaVariable = 0xad
	CmdSetTLVariable       = 0xc2

	CmdSubscribeTLVariable       = 0xd2
	CmdSubscribeLaneAreaVariable = 0xdd
)

// Variable ids.
const (
	// VarIDList (any domain) is the list of object ids, a string list.
	VarIDList = 0x00
	// VarLastStepVehicleNumber (lane-area detector) is the number of
	// vehicles on the detector in the last step, an int.
	VarLastStepVehicleNumber = 0x10
	// VarRedYellowGreenState (traffic light) is the state string, one
	// character per controlled link.
	VarRedYellowGreenState = 0x20
	// VarPhaseIndex (traffic light, set) switches to a phase of the
	// current program.
	VarPhaseIndex = 0x22
	// VarCurrentPhase (traffic light, get) is the current phase index.
	VarCurrentPhase = 0x28
	// VarTime (simulation) is the current time in seconds, a double.
	VarTime = 0x66
	// VarMinExpectedVehicles (simulation) is the number of vehicles
	// running or waiting to be inserted, an int.
	VarMinExpectedVehicles = 0x7d
)

// Value type tags.
const (
	TypeUByte      = 0x07
	TypeByte       = 0x08
	TypeInteger    = 0x09
	TypeDouble     = 0x0b
	TypeString     = 0x0c
	TypeStringList = 0x0e
	TypeCompound   = 0x0f
)

// Status results.
const (
	StatusOK             = 0x00
	StatusNotImplemented = 0x01
	StatusError          = 0xff
)

// responseOffset turns a get command id into its response id (0xad ->
// 0xbd).
const responseOffset = 0x10
