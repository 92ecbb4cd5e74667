package display

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/gopbs/gopbs/proto"
)

// xmlDecl is the declaration Torque prints on its own line before each
// document.
const xmlDecl = `<?xml version="1.0"?>`

// JobsXML writes Torque's "qstat -x" output for jobs: the XML declaration
// on one line and one <Data> document holding a <Job> per job on the next.
// Each <Job> starts with <Job_Id>; the attributes follow in order with the
// Torque names, a resource list nested (<Resource_List><walltime>...), and
// times left as epoch seconds. With no jobs the document is an empty
// <Data></Data>, as Torque prints it.
//
// The document is always well-formed and on one line whatever the values
// hold: markup characters are escaped, TAB, CR and LF become character
// references, characters XML 1.0 cannot carry (other controls, invalid
// UTF-8) become U+FFFD, and a name that is not an XML name is repaired.
func JobsXML(w io.Writer, jobs []proto.Status, o Options) error {
	var b strings.Builder
	b.WriteString(xmlDecl + "\n<Data>")
	for _, j := range jobs {
		b.WriteString("<Job>")
		xmlElement(&b, "Job_Id", j.Name)
		inGroup, group := false, "" // the resource-list element currently open
		for _, a := range present(o.Personality, j.Attrs) {
			if inGroup && (a.Resource == "" || a.Name != group) {
				b.WriteString("</" + xmlName(group) + ">")
				inGroup = false
			}
			if a.Resource == "" {
				xmlElement(&b, a.Name, a.Value)
				continue
			}
			if !inGroup {
				b.WriteString("<" + xmlName(a.Name) + ">")
				inGroup, group = true, a.Name
			}
			xmlElement(&b, a.Resource, a.Value)
		}
		if inGroup {
			b.WriteString("</" + xmlName(group) + ">")
		}
		b.WriteString("</Job>")
	}
	b.WriteString("</Data>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func xmlElement(b *strings.Builder, name, value string) {
	n := xmlName(name)
	b.WriteString("<" + n + ">")
	xmlText(b, value)
	b.WriteString("</" + n + ">")
}

// xmlText writes s as escaped character data on a single line.
func xmlText(b *strings.Builder, s string) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '\t':
			b.WriteString("&#9;")
		case r == '\n':
			b.WriteString("&#10;")
		case r == '\r':
			b.WriteString("&#13;")
		case !xmlChar(r):
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
	}
}

// xmlChar reports whether XML 1.0 allows r in a document (the Char
// production); invalid UTF-8 decodes as U+FFFD, which it allows.
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		(r >= 0x20 && r <= 0xD7FF) ||
		(r >= 0xE000 && r <= 0xFFFD) ||
		(r >= 0x10000 && r <= 0x10FFFF)
}

// xmlName makes s a usable element name. Attribute and resource names are
// normally plain ASCII names already; anything else has its offending
// characters replaced by '_' (and '_' put in front of a bad first
// character), so that a strange resource name cannot break the document.
// Only ASCII letters, digits, '_', '-' and '.' are kept: every XML parser
// accepts those, whatever Unicode tables it was built with.
func xmlName(s string) string {
	ok := s != ""
	for i := 0; i < len(s) && ok; i++ {
		ok = nameByte(s[i], i == 0)
	}
	if ok {
		return s
	}
	var b strings.Builder
	if s == "" || !nameByte(s[0], true) {
		b.WriteByte('_')
	}
	for _, r := range s {
		if r < utf8.RuneSelf && nameByte(byte(r), false) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func nameByte(c byte, first bool) bool {
	switch {
	case c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		return true
	case first:
		return false
	}
	return c == '-' || c == '.' || (c >= '0' && c <= '9')
}
