//go:build !faultpoints

package fault

// Enabled reports whether this is a fault build.
const Enabled = false

// Hit does nothing outside fault builds.
func Hit(string) error { return nil }
