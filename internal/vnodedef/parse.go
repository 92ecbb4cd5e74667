package vnodedef

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// VersionLine is the first line of every version-2 file.
const VersionLine = "$configversion 2"

// Attribute names a file may set beside resources_available.RES.
const (
	AttrResourcesAvail = proto.AttrResourcesAvail
	AttrSharing        = proto.AttrNodeSharing
	AttrResvEnable     = proto.AttrNodeResvEnable
)

// Sharing values accepted. OpenPBS's default_excl, default_exclhost,
// ignore_excl, force_excl and force_exclhost change how jobs are placed on
// the vnode; placement here knows only the job's own place=excl, so a
// file naming them is refused rather than taken and ignored.
var sharingValues = map[string]bool{"default_shared": true, "force_shared": true}

// unsupportedSharing are OpenPBS's other values, refused with their own
// reason.
var unsupportedSharing = map[string]bool{"default_excl": true, "default_exclhost": true,
	"ignore_excl": true, "force_excl": true, "force_exclhost": true}

// Vnode is what the files say of one vnode, values as written (sizes and
// numbers checked for ncpus and mem; other resources are typed by the
// server's resource table when the mom reports them).
type Vnode struct {
	Name string
	// Resources are its resources_available values by resource name.
	Resources map[string]string
	// Sharing is "" when no file sets it.
	Sharing string
	// ResvEnable is nil when no file sets it.
	ResvEnable *bool
}

// Line is one definition line of a file.
type Line struct {
	Num   int // 1-based line number in its file
	Vnode string
	Attr  string // "resources_available", "sharing" or "resv_enable"
	Res   string // the resource of a resources_available line
	Value string
}

// Error names the file line that is wrong and why.
type Error struct {
	File   string
	Line   int
	Reason string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Reason)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
}

func versionLine(t string) bool {
	f := strings.Fields(t)
	return len(f) == 2 && f[0] == "$configversion" && f[1] == "2"
}

// maxLine bounds one line (a file is an admin's, but a runaway one must
// not take the mom's memory).
const maxLine = 64 << 10

// Parse reads one version-2 file (file names it in errors).
func Parse(file string, data []byte) ([]Line, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	var out []Line
	seenVersion := false
	for num := 1; sc.Scan(); num++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if !seenVersion {
			if !versionLine(t) {
				return nil, &Error{file, num, fmt.Sprintf("a version-2 file starts with %q", VersionLine)}
			}
			seenVersion = true
			continue
		}
		l, err := parseLine(t)
		if err != nil {
			return nil, &Error{file, num, err.Error()}
		}
		l.Num = num
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, &Error{File: file, Reason: err.Error()}
	}
	if !seenVersion {
		return nil, &Error{File: file, Reason: fmt.Sprintf("a version-2 file starts with %q", VersionLine)}
	}
	return out, nil
}

// parseLine reads "VNODE: ATTR = VALUE".
func parseLine(t string) (Line, error) {
	if strings.ContainsAny(t, resc.ControlChars) {
		return Line{}, fmt.Errorf("control character in the line")
	}
	id, rest, ok := strings.Cut(t, ":")
	if !ok {
		return Line{}, fmt.Errorf("want \"VNODE: ATTRIBUTE = VALUE\", found %q", t)
	}
	id = strings.TrimSpace(id)
	if err := model.CheckNodeName(id); err != nil {
		return Line{}, err
	}
	attr, value, ok := strings.Cut(rest, "=")
	if !ok {
		return Line{}, fmt.Errorf("want \"VNODE: ATTRIBUTE = VALUE\", found %q", t)
	}
	attr, value = strings.TrimSpace(attr), unquote(strings.TrimSpace(value))
	l := Line{Vnode: id, Value: value}
	name, res, dotted := strings.Cut(attr, ".")
	switch {
	case strings.EqualFold(name, AttrResourcesAvail) && dotted:
		if err := resc.ValidName(res); err != nil {
			return Line{}, err
		}
		if err := checkResource(res, value); err != nil {
			return Line{}, err
		}
		l.Attr, l.Res = AttrResourcesAvail, res
	case strings.EqualFold(attr, AttrSharing):
		if err := CheckAttr(AttrSharing, value); err != nil {
			return Line{}, err
		}
		l.Attr = AttrSharing
	case strings.EqualFold(attr, AttrResvEnable):
		if err := CheckAttr(AttrResvEnable, value); err != nil {
			return Line{}, err
		}
		l.Attr = AttrResvEnable
	default:
		return Line{}, fmt.Errorf("attribute %q cannot be set in a vnode definition (resources_available.RES, sharing, resv_enable)", attr)
	}
	if value == "" {
		return Line{}, fmt.Errorf("%s has no value", attr)
	}
	return l, nil
}

// CheckAttr checks the value of an attribute other than a resource that a
// definition sets; the server checks a mom's report with it too.
func CheckAttr(attr, value string) error {
	switch attr {
	case AttrSharing:
		switch {
		case sharingValues[value]:
			return nil
		case unsupportedSharing[value]:
			return fmt.Errorf("sharing = %s is not supported here (only default_shared and force_shared): placement follows the job's place=excl alone", value)
		}
		return fmt.Errorf("sharing = %q: not a sharing value (default_shared, force_shared)", value)
	case AttrResvEnable:
		if _, err := resc.ParseBool(value); err != nil {
			return fmt.Errorf("resv_enable: %w", err)
		}
		return nil
	}
	return fmt.Errorf("attribute %q cannot be set in a vnode definition (resources_available.RES, sharing, resv_enable)", attr)
}

// checkResource checks the values the mom itself reads: ncpus a count,
// mem a size.
func checkResource(res, value string) error {
	switch res {
	case "ncpus":
		if n, err := strconv.Atoi(value); err != nil || n < 0 {
			return fmt.Errorf("resources_available.ncpus = %q: not a count of cpus", value)
		}
	case "mem":
		if _, err := resc.ParseSize(value); err != nil {
			return fmt.Errorf("resources_available.mem = %q: %w", value, err)
		}
	case "host", "vnode":
		return fmt.Errorf("resources_available.%s is set by the server, not by a vnode definition", res)
	}
	return nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// Merge applies files' lines in order to the vnodes they name; the result
// keeps the vnodes in the order first named.
func Merge(files ...[]Line) []*Vnode {
	var out []*Vnode
	byName := map[string]*Vnode{}
	for _, lines := range files {
		for _, l := range lines {
			v := byName[l.Vnode]
			if v == nil {
				v = &Vnode{Name: l.Vnode, Resources: map[string]string{}}
				byName[l.Vnode] = v
				out = append(out, v)
			}
			switch l.Attr {
			case AttrResourcesAvail:
				v.Resources[l.Res] = l.Value
			case AttrSharing:
				v.Sharing = l.Value
			case AttrResvEnable:
				b, _ := resc.ParseBool(l.Value) // checked by Parse
				v.ResvEnable = &b
			}
		}
	}
	return out
}

// CheckFileName checks the name pbs_mom -s gives a site's file: a plain
// file name, and not one starting with "PBS", which OpenPBS keeps for the
// files it writes itself.
func CheckFileName(name string) error {
	if err := CheckPlainName(name); err != nil {
		return err
	}
	if strings.HasPrefix(name, "PBS") {
		return fmt.Errorf("configuration file name %q: names starting with \"PBS\" are reserved for PBS", name)
	}
	return nil
}

// CheckPlainName checks that name names a file of config.d and nothing
// outside it, nor one the mom skips (pbs_mom -s show takes PBS's too).
func CheckPlainName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("configuration file name %q is empty or a directory", name)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("configuration file name %q: a file name, not a path", name)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("configuration file name %q: a name starting with '.' would be hidden", name)
	}
	return nil
}
