package evaluate

import (
	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/stream"
)

// StreamOptions are the options of ihope estimate over shards that
// ihope-beam shares, with their meaning there.
type StreamOptions struct {
	Estimators []string // --estimators (empty: the default set's streamable ones that apply)
	Gamma      float64  // --gamma
	Bootstrap  int      // --bootstrap: Poisson resamples
	Seed       uint64   // --seed: the bootstrap's
	Alpha      float64  // --alpha: 1 - the intervals' level
	Estimand   string   // --estimand ("" for the default)
	ValueModel string   // --value-model: "linear" streams fqe's LSTD-Q on real states; "neural" is refused (stream.Movable)
}

// NewStreamStats returns the empty statistics that ihope estimate streams
// for shards whose first shard is d, under the flags f: the same
// estimators, chosen by the same rule, with the same settings, but those
// whose statistics cannot move between processes (stream.Movable:
// bch-neural, and fqe and mql with --value-model neural), which are
// refused by name and left out of the default set.
// ihope-beam fills them on its workers.
func NewStreamStats(d *dataset.Dataset, f StreamOptions) (*stream.Stats, error) {
	o := Defaults()
	o.Estimators, o.Gamma, o.Bootstrap, o.Seed = f.Estimators, f.Gamma, f.Bootstrap, f.Seed
	o.Alpha, o.Estimand, o.ValueModel = f.Alpha, f.Estimand, f.ValueModel
	c := &Evaluator{Options: o, movable: true}
	for _, name := range f.Estimators {
		if err := stream.Movable(name, c.streamOptions(nil)); err != nil {
			return nil, err
		}
	}
	return c.newStats(d, nil)
}
