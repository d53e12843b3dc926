package dataset

import (
	"strconv"
	"unicode/utf8"
)

// MaxQuoted is the most bytes of a name or value a message shows.
const MaxQuoted = 60

// Quote returns a name or value quoted for a message (as %q does), cut
// after about 60 bytes with the length it had: "xxx…"(50000000 bytes).
// Every message that shows text from a file goes through it, so that one
// long column name or id cannot flood a terminal (a 50 MB header name was
// printed three times whole: 150 MB of stderr).
func Quote[T string | []byte](s T) string {
	if len(s) <= MaxQuoted {
		return strconv.Quote(string(s))
	}
	cut := MaxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut-- // not inside a character
	}
	return strconv.Quote(string(s[:cut])) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
