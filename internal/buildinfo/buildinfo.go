// Package buildinfo says which ihope a binary is: its module version and
// the commit it was built from.
package buildinfo

import "runtime/debug"

// Version is the module version and VCS commit the binary was built
// from, as the Go toolchain recorded them ("(devel)" and the commit for a
// build in a clone, "v1.2.3" for go install of a tagged version; a
// "+dirty" commit was built from a modified tree).
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "ihope (unknown version: built without module information)"
	}
	v := "ihope " + info.Main.Version
	var commit, when string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if commit != "" {
		v += ", commit " + commit
		if dirty {
			v += "+dirty"
		}
		if when != "" {
			v += " (" + when + ")"
		}
	}
	return v + ", " + info.GoVersion
}
