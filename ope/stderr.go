package ope

// StdErrer is implemented by estimators whose Result.SE is a standard
// error of their own (the doubly robust estimator's influence function,
// clustered by episode), so that a caller can tell an SE of exactly 0
// from an estimator without one: every episode's term is then the same,
// as in a deterministic world whose model the logs fit exactly, and the
// Wald interval is the point itself (a bootstrap over episodes would
// refit to the same value). The other estimators leave Result.SE 0.
type StdErrer interface {
	// HasSE reports whether Result.SE is the estimate's standard error
	// on logs of two or more episodes.
	HasSE() bool
}

// HasSE implements StdErrer.
func (DR) HasSE() bool { return true }
