package kernelloss

import "github.com/ihope-ope/ihope/dataset"

// FirstPass makes, over a log in memory, the first pass of a two-pass
// fit (the kernel learners): add sees every episode in the log's order,
// as a stream's first pass sees the shards', then features fixes what
// depends on the whole log (scaling, bandwidth, centres). The in-memory
// fits call it so that they draw exactly what a stream draws.
func FirstPass[F any](d *dataset.Dataset, add func(d *dataset.Dataset, e int) error, features func() (F, error)) (F, error) {
	for e := range d.NumEpisodes() {
		if err := add(d, e); err != nil {
			var zero F
			return zero, err
		}
	}
	return features()
}
