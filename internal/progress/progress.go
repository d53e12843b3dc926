// Package progress draws the bars of ihope's long steps on a terminal,
// and only there: a person watching sees progress, a pipe or a file sees
// nothing.
package progress

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Throttle is the least time between two redraws of a bar that may be
// updated very often (bytes read, network evaluations); the tests set it
// to 0 to see every update.
var Throttle = 100 * time.Millisecond

// IsTerminal reports whether w is a terminal, so progress is drawn only
// for a person watching and never into a pipe or file.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Bar is the bar every long step draws on w: label, elapsed time and the
// time left, cleared when it ends.
func Bar(w io.Writer, total int, label string, more ...progressbar.Option) *progressbar.ProgressBar {
	return progressbar.NewOptions(total, append([]progressbar.Option{progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(label), progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish()}, more...)...)
}
