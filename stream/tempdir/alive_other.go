//go:build !unix

package tempdir

// alive cannot tell here, so it says yes: nothing is swept.
func alive(int) bool { return true }
