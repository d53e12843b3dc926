package taxi

import (
	"fmt"
	"sync"

	"github.com/ihope-ope/ihope/mdp"
)

// Size of the world.
const (
	GridSize   = 5                                          // the grid is GridSize x GridSize
	NumCorners = 4                                          // passenger corners
	NumMasks   = 1 << NumCorners                            // waiting-passenger masks
	Empty      = NumCorners                                 // status of an empty taxi
	NumStatus  = NumCorners + 1                             // taxi statuses 0..4
	NumStates  = GridSize * GridSize * NumMasks * NumStatus // 2000
	NumActions = 6
)

// Actions.
const (
	XPlus   = 0
	YPlus   = 1
	XMinus  = 2
	YMinus  = 3
	PickUp  = 4
	DropOff = 5
)

// Rewards.
const (
	RewardStep    = -1.0 // every step that is not a successful drop-off
	RewardDropOff = 20.0 // drop-off at the passenger's destination
)

// corners are the passenger locations (x, y), in bit order.
var corners = [NumCorners][2]int{{0, 0}, {0, GridSize - 1}, {GridSize - 1, 0}, {GridSize - 1, GridSize - 1}}

// Per-corner probabilities, in corner order, that a waiting passenger
// leaves and that an empty corner gets a passenger, applied after every
// action.
var (
	pDisappear = [NumCorners]float64{0.05, 0.1, 0.1, 0.05}
	pAppear    = [NumCorners]float64{0.3, 0.05, 0.1, 0.2}
)

// Corner returns the position (x, y) of passenger corner i (0..3):
// (0,0), (0,4), (4,0), (4,4). It panics unless 0 <= i < 4.
func Corner(i int) (x, y int) { return corners[i][0], corners[i][1] }

// Encode returns the state id of a taxi at (x, y) with waiting-passenger
// mask and status (Empty or the destination corner 0..3):
// status + 5*(mask + 16*(5*x + y)). It panics on an out-of-range argument.
func Encode(x, y, mask, status int) int {
	if x < 0 || x >= GridSize || y < 0 || y >= GridSize || mask < 0 || mask >= NumMasks || status < 0 || status >= NumStatus {
		panic(fmt.Sprintf("taxi: encode (%d, %d, %d, %d) out of range", x, y, mask, status))
	}
	return status + NumStatus*(mask+NumMasks*(GridSize*x+y))
}

// Decode inverts Encode. It panics unless 0 <= s < NumStates.
func Decode(s int) (x, y, mask, status int) {
	if s < 0 || s >= NumStates {
		panic(fmt.Sprintf("taxi: state %d out of range", s))
	}
	status = s % NumStatus
	s /= NumStatus
	mask = s % NumMasks
	s /= NumMasks
	return s / GridSize, s % GridSize, mask, status
}

// MDP is the Taxi world with its full transition table.
type MDP struct {
	out  [NumStates][NumActions][]mdp.Outcome
	init []float64
}

var _ mdp.Finite = (*MDP)(nil)

var build = sync.OnceValue(newMDP)

// New returns the Taxi world. The table (about 200,000 outcomes) is built
// on the first call; later calls return the same read-only value.
func New() *MDP { return build() }

// NumStates returns 2000.
func (m *MDP) NumStates() int { return NumStates }

// NumActions returns 6.
func (m *MDP) NumActions() int { return NumActions }

// Initial returns the reset distribution: x, y uniform, mask uniform,
// taxi empty. It must not be modified.
func (m *MDP) Initial() []float64 { return m.init }

// Outcomes returns the outcomes of action a in state s, one per distinct
// next state. The slice must not be modified.
func (m *MDP) Outcomes(s, a int) []mdp.Outcome { return m.out[s][a] }

// maskLaw returns the distribution of the next mask given the mask after
// the action's effect: each corner flips independently (pDisappear,
// pAppear).
func maskLaw(mask int) [NumMasks]float64 {
	var p [NumMasks]float64
	for next := range p {
		q := 1.0
		for i := 0; i < NumCorners; i++ {
			was, is := mask>>i&1 == 1, next>>i&1 == 1
			switch {
			case was && is:
				q *= 1 - pDisappear[i]
			case was && !is:
				q *= pDisappear[i]
			case !was && is:
				q *= pAppear[i]
			default:
				q *= 1 - pAppear[i]
			}
		}
		p[next] = q
	}
	return p
}

// corner returns the corner index at (x, y), or -1.
func corner(x, y int) int {
	for i, c := range corners {
		if c[0] == x && c[1] == y {
			return i
		}
	}
	return -1
}

// effect is one deterministic result of an action before the passenger
// update: position, mask and status with its probability and reward.
type effect struct {
	x, y, mask, status int
	prob, reward       float64
}

// effects applies action a to (x, y, mask, status).
func effects(x, y, mask, status, a int) []effect {
	e := effect{x, y, mask, status, 1, RewardStep}
	switch a {
	case XPlus:
		e.x = min(x+1, GridSize-1)
	case YPlus:
		e.y = min(y+1, GridSize-1)
	case XMinus:
		e.x = max(x-1, 0)
	case YMinus:
		e.y = max(y-1, 0)
	case PickUp:
		if c := corner(x, y); c >= 0 && mask>>c&1 == 1 {
			var out []effect
			for dest := 0; dest < NumCorners; dest++ {
				if dest != c {
					out = append(out, effect{x, y, mask &^ (1 << c), dest, 1.0 / 3, RewardStep})
				}
			}
			return out
		}
	case DropOff:
		if status != Empty {
			if corner(x, y) == status {
				e.reward = RewardDropOff
			}
			e.status = Empty
		}
	}
	return []effect{e}
}

func newMDP() *MDP {
	m := &MDP{init: make([]float64, NumStates)}
	var laws [NumMasks][NumMasks]float64
	for mask := range laws {
		laws[mask] = maskLaw(mask)
	}
	for s := 0; s < NumStates; s++ {
		x, y, mask, status := Decode(s)
		if status == Empty {
			m.init[s] = 1.0 / (GridSize * GridSize * NumMasks)
		}
		for a := 0; a < NumActions; a++ {
			var out []mdp.Outcome
			index := map[int]int{} // next state -> position in out
			for _, e := range effects(x, y, mask, status, a) {
				for next, p := range laws[e.mask] {
					ns := Encode(e.x, e.y, next, e.status)
					if i, ok := index[ns]; ok {
						// Merge, keeping the expected reward of the merged outcome.
						o := &out[i]
						o.Reward = (o.Prob*o.Reward + e.prob*p*e.reward) / (o.Prob + e.prob*p)
						o.Prob += e.prob * p
						continue
					}
					index[ns] = len(out)
					out = append(out, mdp.Outcome{Next: ns, Prob: e.prob * p, Reward: e.reward})
				}
			}
			m.out[s][a] = out
		}
	}
	return m
}
