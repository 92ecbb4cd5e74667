package schedpriv

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// parseDuration reads a sched_config time: "H:M:S", "M:S" or a plain number
// of seconds. Every part is a non-negative decimal integer; minutes and
// seconds after the first part must be below 60, since "1:75:00" is a typo
// rather than a way to write 2:15:00.
func parseDuration(s string) (time.Duration, error) {
	parts := strings.Split(s, ":")
	if len(parts) > 3 {
		return 0, fmt.Errorf("bad time %q (want H:M:S, M:S or seconds)", s)
	}
	var total int64
	for i, p := range parts {
		if p == "" || strings.TrimLeft(p, "0123456789") != "" {
			return 0, fmt.Errorf("bad time %q (want H:M:S, M:S or seconds)", s)
		}
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("time %q is too large", s)
		}
		if i > 0 && v >= 60 {
			return 0, fmt.Errorf("bad time %q: minutes and seconds must be below 60", s)
		}
		if total > (math.MaxInt64/int64(time.Second)-v)/60 {
			return 0, fmt.Errorf("time %q is too large", s)
		}
		total = total*60 + v
	}
	return time.Duration(total) * time.Second, nil
}

// formatDuration writes d as H:MM:SS, which parseDuration reads back to the
// same value (durations from sched_config are whole seconds).
func formatDuration(d time.Duration) string {
	s := int64(d / time.Second)
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}
