package cobs

// The settings whose exact truths the package documents and tests: the
// horizon T and discount gamma of each world's evaluation.
const (
	// COBS's Graph experiment (cfgs/base_toy_graph_cfg.json): L = 16
	// (also the horizon: every episode lasts exactly L steps), stochastic
	// transitions with COBS's slip of 0.25, dense rewards, gamma = 0.98.
	GraphLength = 16
	GraphSlip   = 0.25
	GraphGamma  = 0.98

	// COBS's toy mountain car (cfgs/base_toy_mc_cfg.json).
	ToyMCHorizon = 250
	ToyMCGamma   = 0.99

	// Thomas and Brunskill's horizons of Model Fail (L = 2) and Model Win
	// (L = 20), undiscounted as their returns are.
	ModelFailHorizon = 2
	ModelWinHorizon  = 20
	ModelGamma       = 1
)

// NewDefaultGraph returns the Graph of COBS's Graph experiment: length
// GraphLength, slip GraphSlip, dense rewards, fully observed.
func NewDefaultGraph() *Graph {
	g, err := NewGraph(GraphConfig{Length: GraphLength, Slip: GraphSlip})
	if err != nil {
		panic(err) // unreachable: valid options
	}
	return g
}

// NewModelFail returns COBS's ModelFail world at the defaults of its class
// (ope/envs/model_fail.py): the Graph of length 2 with deterministic
// transitions and dense rewards, whose states 0, 1 and 2 are seen as one
// observation (make_pomdp with 2 observations: Observe gives 0 for them
// and 1 for the absorbing state 3). This is the "Model Fail" domain of
// Thomas and Brunskill (2016): 4 states, horizon 2, 3 of them aliased, so
// that a model fitted on observations is wrong even with infinite data.
func NewModelFail() *Graph {
	g, err := NewGraph(GraphConfig{Length: ModelFailHorizon, Observations: 2})
	if err != nil {
		panic(err) // unreachable: valid options
	}
	return g
}
