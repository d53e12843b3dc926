package kernelloss

// FoldChunk is the second pass every streaming minimax learner makes over
// one episode (ratio.KernelFeatures, ratio.PairKernelFeatures,
// value.MQLFeatures): the episode's terms are written row by row into a
// chunk, and the chunk is added to the sums of the terms' fold whenever
// it is full or the fold changes. Terms of one fold should come together,
// so that the adds are few; the sums are right in any order.
//
// Set Chunk, Folds (a nil fold is made with NewQuadratic(D, P) on first
// use), Used (which folds the episode touched, set as it goes) and Add
// (how a chunk's first n rows enter a fold's sums: Accumulate,
// AccumulateBlock or AccumulateRows with the learner's offsets); one
// FoldChunk serves one episode (or one block of it), and Flush ends it.
type FoldChunk struct {
	Chunk *Chunk
	Folds []*Quadratic
	Used  []bool
	D, P  int
	Add   func(q *Quadratic, ch *Chunk, n int)

	fold, n int
	q       *Quadratic // the sums of fold, nil before the first row
}

// Row returns the chunk row the next term of fold f goes in and that
// fold's sums (whose weights Z, Z2 the caller counts), first adding the
// chunk in hand if it is full or holds another fold's terms.
func (w *FoldChunk) Row(f int) (int, *Quadratic) {
	if w.q == nil || f != w.fold || w.n == ChunkLen {
		w.Flush()
		if w.q == nil || f != w.fold {
			if w.Folds[f] == nil {
				w.Folds[f] = NewQuadratic(w.D, w.P)
			}
			w.fold, w.q = f, w.Folds[f]
			w.Used[f] = true
		}
	}
	r := w.n
	w.n++
	return r, w.q
}

// Flush adds the rows in hand to their fold's sums.
func (w *FoldChunk) Flush() {
	if w.n > 0 {
		w.Add(w.q, w.Chunk, w.n)
		w.n = 0
	}
}

// AddFolds adds a times the sums of the folds src used to dst: one
// episode's share, with its multiplicity a, entering a learner's moments.
func AddFolds(dst, src []*Quadratic, used []bool, a float64) {
	for f, u := range used {
		if u {
			dst[f].AddScaled(src[f], a)
		}
	}
}

// MergeFolds adds the sums of every fold of src to dst.
func MergeFolds(dst, src []*Quadratic) {
	for f := range dst {
		dst[f].Add(src[f])
	}
}

// SecondPass forms the shares of a log's n episodes on workers goroutines
// (form writes episode i's share into its scratch E) and adds them to the
// moments m in the log's order (InOrder), so that the sums are those of a
// stream adding the same episodes in the same order, bit for bit. It
// returns m.
func SecondPass[E any, M interface{ Add(ep *E, k int) }](m M, n, workers int, form func(i int, ep *E) error) (M, error) {
	err := InOrder(n, workers, func() *E { return new(E) }, form, func(_ int, ep *E) { m.Add(ep, 1) })
	return m, err
}

// FoldOf is the fold, of folds, of step t of an episode of T steps whose
// id hashes to idHash (HashID): fold 0 for one fold; with byEpisode the
// whole episode's fold, drawn by hashing its id with salt (so shards and
// workers agree without talking); otherwise the fold of its stretch of
// the episode, t folds / T, so that one long episode still has folds.
func FoldOf(folds int, byEpisode bool, salt, idHash uint64, t, T int) int {
	switch {
	case folds == 1:
		return 0
	case byEpisode:
		return int(Mix(idHash^Mix(salt)) % uint64(folds))
	}
	return t * folds / T
}
