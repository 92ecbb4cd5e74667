package schedpriv

import (
	"bufio"
	"fmt"
	"io"
	"slices"
)

// Format writes c as a sched_config that ParseConfig reads back to an equal
// configuration (warnings aside): every option, one per line, with a
// prime/non_prime suffix only where the two sides differ. Tools use it to
// show the effective configuration.
func (c *Config) Format(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, o := range configOptions() {
		if o.skipped() || o.aliasOf != "" {
			continue
		}
		if o.showS != nil {
			p, np := o.showS(&c.Prime), o.showS(&c.NonPrime)
			if slices.Equal(p, np) {
				for _, v := range p {
					fmt.Fprintf(bw, "%s: %s\tall\n", o.name, v)
				}
				continue
			}
			for _, v := range p {
				fmt.Fprintf(bw, "%s: %s\tprime\n", o.name, v)
			}
			for _, v := range np {
				fmt.Fprintf(bw, "%s: %s\tnon_prime\n", o.name, v)
			}
			continue
		}
		for _, v := range o.showC(c) {
			fmt.Fprintf(bw, "%s: %s\n", o.name, v)
		}
	}
	return bw.Flush()
}
