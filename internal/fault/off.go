//go:build !faultpoints

package fault

import "time"

// Enabled reports whether this is a fault build.
const Enabled = false

// Hit does nothing outside fault builds.
func Hit(string) error { return nil }

// Now is the host's clock outside fault builds.
func Now() time.Time { return time.Now() }
