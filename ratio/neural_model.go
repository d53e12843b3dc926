package ratio

import (
	"fmt"
	"math"
	"sync"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/nn"
)

// NeuralModel is a learned density ratio of real-valued states.
type NeuralModel struct {
	// Net maps scaled states to unnormalised ratios.
	Net *nn.MLP

	// Mean and Scale scale a state s into the network input
	// x = (s - Mean)/Scale, per dimension.
	Mean, Scale []float64

	// Norm divides the network output: Ratio(s) = Net(x)/Norm, where Norm
	// makes the gamma^t-weighted mean of the ratio over the logged states
	// s_t equal to 1 (the normalisation E_{d_pi0}[w] = 1 of the paper).
	Norm float64

	// Bandwidth is the kernel bandwidth h in scaled units.
	Bandwidth float64

	// Iterations is the number of training iterations run and BestIter
	// the iteration whose parameters were kept.
	Iterations, BestIter int

	// TrainLoss is the mean minibatch loss over the last evaluation
	// period, HeldOutLoss the held-out loss at BestIter (NaN without
	// held-out data).
	TrainLoss, HeldOutLoss float64

	pool *sync.Pool // of *neuralRow
}

// Dim returns the state dimension the model expects.
func (m *NeuralModel) Dim() int { return len(m.Mean) }

// Ratio returns the learned w(s) for one state. It returns NaN if obs does
// not have the model's dimension. It is safe for concurrent use.
func (m *NeuralModel) Ratio(obs []float64) float64 {
	d := len(m.Mean)
	if len(obs) != d {
		return math.NaN()
	}
	var ws *neuralRow
	if m.pool != nil {
		ws = m.pool.Get().(*neuralRow)
		defer m.pool.Put(ws)
	} else { // a model built by hand
		ws = &neuralRow{ws: m.Net.NewWorkspace(1), x: make([]float64, d)}
	}
	for k, v := range obs {
		ws.x[k] = (v - m.Mean[k]) / m.Scale[k]
	}
	return m.Net.Forward(ws.ws, ws.x, 1)[0] / m.Norm
}

// neuralRow is the scratch space of one Ratio call.
type neuralRow struct {
	ws *nn.Workspace
	x  []float64
}

// RatioBatch returns w(s) for every state of obs. It returns an error if
// a state does not have the model's dimension.
func (m *NeuralModel) RatioBatch(obs [][]float64) ([]float64, error) {
	d := len(m.Mean)
	out := make([]float64, len(obs))
	const chunk = 1024
	ws := m.Net.NewWorkspace(min(chunk, len(obs)))
	x := make([]float64, min(chunk, len(obs))*d)
	for lo := 0; lo < len(obs); lo += chunk {
		hi := min(lo+chunk, len(obs))
		for i := lo; i < hi; i++ {
			if len(obs[i]) != d {
				return nil, fmt.Errorf("ratio: state %d has dimension %d, the model %d", i, len(obs[i]), d)
			}
			row := x[(i-lo)*d : (i-lo+1)*d]
			for k, v := range obs[i] {
				row[k] = (v - m.Mean[k]) / m.Scale[k]
			}
		}
		y := m.Net.Forward(ws, x, hi-lo)
		for i := lo; i < hi; i++ {
			out[i] = y[i-lo] / m.Norm
		}
	}
	return out, nil
}

// StepRatios returns w(s_t) for every step of d, episode after episode in
// step order (the order of the estimator's weights).
func (m *NeuralModel) StepRatios(d *dataset.Dataset) ([]float64, error) {
	obs := make([][]float64, d.NumSteps())
	for j := range obs {
		obs[j] = d.ObsAt(j)
	}
	w, err := m.RatioBatch(obs)
	if err != nil {
		return nil, fmt.Errorf("ratio: %w", err)
	}
	return w, nil
}

func newNeuralModel(net *nn.MLP, mean, scale []float64) *NeuralModel {
	m := &NeuralModel{Net: net, Mean: mean, Scale: scale, Norm: 1}
	d := len(mean)
	m.pool = &sync.Pool{New: func() any {
		return &neuralRow{ws: net.NewWorkspace(1), x: make([]float64, d)}
	}}
	return m
}

// normalise sets Norm to the gamma^t-weighted mean of the network output
// over the logged states.
func (m *NeuralModel) normalise(d *dataset.Dataset, gamma float64) error {
	m.Norm = 1
	w, err := m.StepRatios(d)
	if err != nil {
		return err
	}
	var num, den float64
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		g := 1.0
		for k := lo; k < hi; k++ {
			gk := g
			if k == hi-1 {
				gk *= d.DiscountTail(e, gamma)
			}
			num += gk * w[k]
			den += gk
			g *= gamma
		}
	}
	norm := num / den
	if !(norm > 0) || math.IsInf(norm, 0) {
		return fmt.Errorf("ratio: the learned ratio has mean %v over the logged states", norm)
	}
	m.Norm = norm
	return nil
}
