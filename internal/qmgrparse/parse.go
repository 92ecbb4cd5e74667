package qmgrparse

import (
	"fmt"
	"strings"

	"github.com/gopbs/gopbs/proto"
)

// Verb is a qmgr command.
type Verb uint8

// Verbs, in the order PBS tries them when matching a prefix.
const (
	VerbCreate Verb = iota + 1
	VerbDelete
	VerbSet
	VerbUnset
	VerbList
	VerbPrint
	VerbActive
	VerbHelp
	VerbQuit
	VerbExit
	// VerbImport and VerbExport are OpenPBS's "import hook NAME
	// content-type content-encoding FILE" and "export hook NAME
	// content-type content-encoding [FILE]".
	VerbImport
	VerbExport
)

func (v Verb) String() string {
	switch v {
	case VerbCreate:
		return "create"
	case VerbDelete:
		return "delete"
	case VerbSet:
		return "set"
	case VerbUnset:
		return "unset"
	case VerbList:
		return "list"
	case VerbPrint:
		return "print"
	case VerbActive:
		return "active"
	case VerbHelp:
		return "help"
	case VerbQuit:
		return "quit"
	case VerbExit:
		return "exit"
	case VerbImport:
		return "import"
	case VerbExport:
		return "export"
	}
	return fmt.Sprintf("verb(%d)", uint8(v))
}

// ManagerCommand is the manager request a verb sends, and false for the
// verbs qmgr carries out itself or with status requests.
func (v Verb) ManagerCommand() (proto.ManagerCommand, bool) {
	switch v {
	case VerbCreate:
		return proto.MgrCreate, true
	case VerbDelete:
		return proto.MgrDelete, true
	case VerbSet:
		return proto.MgrSet, true
	case VerbUnset:
		return proto.MgrUnset, true
	}
	return 0, false
}

// namesOnly reports whether the verb's attributes are bare names.
func (v Verb) namesOnly() bool { return v == VerbUnset || v == VerbList || v == VerbPrint }

// ObjName is one element of a name list: name[@server]. Server is "" when
// no '@' was given; Name is "" for "@server", which means every object of
// the type at that server.
type ObjName struct {
	Name   string
	Server string
}

func (n ObjName) String() string {
	if n.Server == "" {
		return n.Name
	}
	return n.Name + "@" + n.Server
}

// Command is one parsed qmgr command.
type Command struct {
	Verb   Verb
	Object proto.ObjectType // 0 for help, quit and exit
	Names  []ObjName        // nil when no name was given
	// Attrs hold Op OpSet, OpIncr or OpDecr with a value for create and
	// set; Op OpUnset and no value for unset; bare names (OpSet, no value)
	// selecting what list and print show.
	Attrs []proto.Attr
	Topic string // the rest of a help command
	// Content is what an import or export names.
	Content *Content
	Text    string // the command as parsed, trimmed
}

// Content is the rest of an import or export command: the content type
// (application/x-python for the script, application/x-config for its
// configuration file), the encoding of the file (default or base64) and
// the file ("-" or, for export, "" for the standard streams).
type Content struct {
	Type, Encoding, File string
}

// String renders the command in canonical form: full words, names joined
// by commas, attributes separated by ", " with values quoted by Quote.
// Parse(c.String()) gives back c apart from Text.
func (c *Command) String() string {
	var b strings.Builder
	b.WriteString(c.Verb.String())
	switch c.Verb {
	case VerbHelp:
		if c.Topic != "" {
			b.WriteString(" " + c.Topic)
		}
		return b.String()
	case VerbQuit, VerbExit:
		return b.String()
	}
	b.WriteString(" " + c.Object.String())
	if c.Content != nil {
		for _, n := range c.Names {
			b.WriteString(" " + n.String())
		}
		b.WriteString(" " + Quote(c.Content.Type) + " " + Quote(c.Content.Encoding))
		if c.Content.File != "" {
			b.WriteString(" " + Quote(c.Content.File))
		}
		return b.String()
	}
	for i, n := range c.Names {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(n.String())
	}
	for i, a := range c.Attrs {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteString(", ")
		}
		b.WriteString(a.FullName())
		if c.Verb.namesOnly() {
			continue
		}
		b.WriteString(" " + opText(a.Op) + " " + Quote(a.Value))
	}
	return b.String()
}

func opText(op proto.Op) string {
	switch op {
	case proto.OpIncr:
		return "+="
	case proto.OpDecr:
		return "-="
	}
	return "="
}

// Messages. The first six are PBS's texts; the others cover cases PBS
// lumps under "cannot locate attribute" and say what is wrong instead.
const (
	msgIllegalOp       = "qmgr: Illegal operation: %s\nTry 'help' if you are having trouble."
	msgIllegalObject   = "qmgr: Illegal object type: %s."
	msgNoObject        = "qmgr: No object type given"
	msgNoAttr          = "qmgr: Syntax error - cannot locate attribute"
	msgAttrRequired    = "qmgr: Syntax error - attribute required for operation"
	msgAttrNotAllowed  = "qmgr: Syntax error - operation does not allow attribute"
	msgUnsupported     = "qmgr: Object type not supported: %s."
	msgBadName         = "qmgr: Syntax error - illegal object name"
	msgNameRequired    = "qmgr: Syntax error - object name required for operation"
	msgValueRequired   = "qmgr: Syntax error - operator and value required for attribute"
	msgValueNotAllowed = "qmgr: Syntax error - operation does not allow a value"
	msgNoValue         = "qmgr: Syntax error - cannot locate value"
	msgUnmatchedQuote  = "qmgr: Syntax error - unmatched quote"
	msgExpectComma     = "qmgr: Syntax error - expected ',' before next attribute"
	msgHooksOnly       = "qmgr: Syntax error - %s is for hooks only"
	msgOneHook         = "qmgr: Syntax error - %s takes one hook"
	msgNoContentType   = "qmgr: Syntax error - %s requires <content-type>"
	msgNoEncoding      = "qmgr: Syntax error - %s requires <content-encoding>"
	msgNoInputFile     = "qmgr: Syntax error - import requires <input-file>"
	msgTrailing        = "qmgr: Syntax error - unexpected text after the file"
)

// SyntaxError is a command qmgr cannot parse. Its Error text is what qmgr
// prints: the message, the command, and a caret under byte Pos of Input.
type SyntaxError struct {
	Msg   string
	Input string
	Pos   int
}

func (e *SyntaxError) Error() string {
	var b strings.Builder
	b.WriteString(e.Msg)
	b.WriteByte('\n')
	b.WriteString(e.Input)
	b.WriteByte('\n')
	// Tabs are copied so that the caret lines up however the terminal
	// expands them.
	for i := 0; i < e.Pos && i < len(e.Input); i++ {
		if e.Input[i] == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	b.WriteByte('^')
	return b.String()
}

type parser struct {
	s   string
	pos int
}

func (p *parser) eol() bool { return p.pos >= len(p.s) }

func (p *parser) skipWhite() {
	for p.pos < len(p.s) && isWhite(p.s[p.pos]) {
		p.pos++
	}
}

// opAt returns the operator at byte i and its length, 0 when none.
func opAt(s string, i int) (proto.Op, int) {
	if i >= len(s) {
		return 0, 0
	}
	switch s[i] {
	case '=':
		return proto.OpSet, 1
	case '+', '-':
		if i+1 < len(s) && s[i+1] == '=' {
			if s[i] == '+' {
				return proto.OpIncr, 2
			}
			return proto.OpDecr, 2
		}
	}
	return 0, 0
}

// word reads up to white space, or also up to an operator when stopAtOp,
// as PBS splits "s s scheduling=true" into four words.
func (p *parser) word(stopAtOp bool) string {
	start := p.pos
	for p.pos < len(p.s) && !isWhite(p.s[p.pos]) {
		if _, n := opAt(p.s, p.pos); stopAtOp && n > 0 {
			break
		}
		p.pos++
	}
	return p.s[start:p.pos]
}

func (p *parser) fail(pos int, msg string) *SyntaxError {
	return &SyntaxError{Msg: msg, Input: p.s, Pos: pos}
}

func matchVerb(w string) Verb {
	for _, c := range [...]struct {
		word string
		verb Verb
	}{
		{"create", VerbCreate}, {"delete", VerbDelete}, {"set", VerbSet}, {"unset", VerbUnset},
		{"list", VerbList}, {"print", VerbPrint}, {"active", VerbActive}, {"help", VerbHelp},
		{"?", VerbHelp}, {"quit", VerbQuit}, {"exit", VerbExit},
		{"import", VerbImport}, {"export", VerbExport},
	} {
		if strings.HasPrefix(c.word, w) {
			return c.verb
		}
	}
	return 0
}

// matchObject returns the object type for w, or the full name of an
// object type PBS has and this system does not.
func matchObject(w string) (proto.ObjectType, string) {
	for _, c := range [...]struct {
		word string
		obj  proto.ObjectType
	}{
		{"server", proto.ObjServer}, {"queues", proto.ObjQueue}, {"nodes", proto.ObjNode},
		{"resource", proto.ObjResource}, {"sched", proto.ObjSched}, {"hook", proto.ObjHook}, {"pbshook", 0},
	} {
		if strings.HasPrefix(c.word, w) {
			if c.obj == 0 {
				return 0, c.word
			}
			return c.obj, ""
		}
	}
	return 0, ""
}

// Parse parses one command. Blank text (nothing but white space) yields
// nil and no error. A malformed command yields a *SyntaxError.
func Parse(text string) (*Command, error) {
	s := trimWhite(text)
	if s == "" {
		return nil, nil
	}
	p := &parser{s: s}
	verbWord := p.word(false)
	verb := matchVerb(verbWord)
	if verb == 0 {
		return nil, p.fail(0, fmt.Sprintf(msgIllegalOp, verbWord))
	}
	cmd := &Command{Verb: verb, Text: s}
	switch verb {
	case VerbHelp:
		p.skipWhite()
		cmd.Topic = s[p.pos:]
		return cmd, nil
	case VerbQuit, VerbExit:
		return cmd, nil
	}

	p.skipWhite()
	if p.eol() {
		return nil, p.fail(p.pos, msgNoObject)
	}
	objPos := p.pos
	objWord := p.word(true)
	if objWord == "" {
		// The object word is missing and an operator stands in its place.
		_, n := opAt(s, p.pos)
		objWord = s[p.pos : p.pos+n]
	}
	obj, unsupported := matchObject(objWord)
	switch {
	case unsupported != "":
		return nil, p.fail(objPos, fmt.Sprintf(msgUnsupported, unsupported))
	case obj == 0:
		return nil, p.fail(objPos, fmt.Sprintf(msgIllegalObject, objWord))
	}
	cmd.Object = obj
	if verb == VerbImport || verb == VerbExport {
		if obj != proto.ObjHook {
			return nil, p.fail(objPos, fmt.Sprintf(msgHooksOnly, verb))
		}
		return p.content(cmd)
	}

	p.skipWhite()
	attrStart := p.pos
	if !p.eol() {
		namePos := p.pos
		w := p.word(true)
		_, opNext := opAt(s, p.pos)
		for q := p.pos; opNext == 0 && q < len(s) && isWhite(s[q]); q++ {
			_, opNext = opAt(s, q+1)
		}
		attrName := w
		if i := strings.IndexAny(w, ".,"); i >= 0 {
			attrName = w[:i]
		}
		if w != "" && opNext == 0 && !isKnownAttr(obj, attrName) {
			names, err := p.names(w, namePos, obj)
			if err != nil {
				return nil, err
			}
			cmd.Names = names
			p.skipWhite()
			attrStart = p.pos
		}
	}
	p.pos = attrStart

	switch {
	case !p.eol() && (verb == VerbActive || verb == VerbDelete):
		return nil, p.fail(attrStart, msgAttrNotAllowed)
	case cmd.Names == nil && (verb == VerbCreate || verb == VerbDelete) && obj != proto.ObjServer:
		return nil, p.fail(attrStart, msgNameRequired)
	}
	attrs, err := p.attributes(verb, obj)
	if err != nil {
		return nil, err
	}
	cmd.Attrs = attrs
	if attrs == nil && (verb == VerbSet || verb == VerbUnset) {
		return nil, p.fail(len(s), msgAttrRequired)
	}
	return cmd, nil
}

// content parses the rest of an import or export: one hook's name, the
// content type, the encoding and the file (optional for export).
func (p *parser) content(cmd *Command) (*Command, error) {
	verb := cmd.Verb.String()
	p.skipWhite()
	if p.eol() {
		return nil, p.fail(p.pos, msgNameRequired)
	}
	namePos := p.pos
	names, err := p.names(p.word(false), namePos, cmd.Object)
	if err != nil {
		return nil, err
	}
	if len(names) != 1 || names[0].Name == "" {
		return nil, p.fail(namePos, fmt.Sprintf(msgOneHook, verb))
	}
	cmd.Names = names
	var words []string
	for {
		p.skipWhite()
		if p.eol() {
			break
		}
		if len(words) == 3 {
			return nil, p.fail(p.pos, msgTrailing)
		}
		w, err := p.value(false)
		if err != nil {
			return nil, err
		}
		if w == "" { // a comma, which no word here holds unquoted
			return nil, p.fail(p.pos, msgTrailing)
		}
		words = append(words, w)
	}
	switch {
	case len(words) < 1:
		return nil, p.fail(p.pos, fmt.Sprintf(msgNoContentType, verb))
	case len(words) < 2:
		return nil, p.fail(p.pos, fmt.Sprintf(msgNoEncoding, verb))
	case len(words) < 3 && cmd.Verb == VerbImport:
		return nil, p.fail(p.pos, msgNoInputFile)
	}
	cmd.Content = &Content{Type: words[0], Encoding: words[1]}
	if len(words) == 3 {
		cmd.Content.File = words[2]
	}
	return cmd, nil
}

// names parses a name list w found at byte base, with PBS's rules: no empty
// element, at most one '@' with a server after it, and a name starting with
// a letter (for nodes, a letter or digit) unless it is empty ("@server").
func (p *parser) names(w string, base int, obj proto.ObjectType) ([]ObjName, error) {
	var out []ObjName
	off := 0
	for _, elem := range strings.Split(w, ",") {
		name, server, hasAt := strings.Cut(elem, "@")
		switch {
		case elem == "":
			return nil, p.fail(base+off, msgBadName)
		case name != "" && !nameStart(name[0], obj):
			return nil, p.fail(base+off, msgBadName)
		case hasAt && server == "":
			return nil, p.fail(base+off+len(name)+1, msgBadName)
		case hasAt && strings.IndexByte(server, '@') >= 0:
			return nil, p.fail(base+off+len(name)+1+strings.IndexByte(server, '@'), msgBadName)
		}
		out = append(out, ObjName{Name: name, Server: server})
		off += len(elem) + 1
	}
	return out, nil
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func nameStart(c byte, obj proto.ObjectType) bool {
	return isAlpha(c) || obj == proto.ObjNode && isDigit(c) || obj == proto.ObjHook && c == '_'
}

func attrNameByte(c byte) bool { return isAlpha(c) || isDigit(c) || c == '_' }

// attributes parses the attribute list from p.pos to the end.
func (p *parser) attributes(verb Verb, obj proto.ObjectType) ([]proto.Attr, error) {
	p.skipWhite()
	if p.eol() {
		return nil, nil
	}
	var attrs []proto.Attr
	for {
		p.skipWhite()
		start := p.pos
		for p.pos < len(p.s) && attrNameByte(p.s[p.pos]) {
			p.pos++
		}
		a := proto.Attr{Name: p.s[start:p.pos]}
		if a.Name == "" {
			return nil, p.fail(p.pos, msgNoAttr)
		}
		if !p.eol() && p.s[p.pos] == '.' {
			p.pos++
			rstart := p.pos
			for p.pos < len(p.s) {
				c := p.s[p.pos]
				if _, n := opAt(p.s, p.pos); n > 0 || !(attrNameByte(c) || c == '-' || c == '.') {
					break
				}
				p.pos++
			}
			a.Resource = p.s[rstart:p.pos]
			if a.Resource == "" {
				return nil, p.fail(p.pos, msgNoAttr)
			}
		}
		if !p.eol() && !isWhite(p.s[p.pos]) && p.s[p.pos] != ',' {
			if _, n := opAt(p.s, p.pos); n == 0 {
				return nil, p.fail(p.pos, msgNoAttr)
			}
		}
		p.skipWhite()
		op, n := opAt(p.s, p.pos)
		if verb.namesOnly() {
			if n > 0 {
				return nil, p.fail(p.pos, msgValueNotAllowed)
			}
			if verb == VerbUnset {
				a.Op = proto.OpUnset
			}
		} else {
			if n == 0 {
				return nil, p.fail(p.pos, msgValueRequired)
			}
			a.Op = op
			p.pos += n
			p.skipWhite()
			if p.eol() || p.s[p.pos] == ',' {
				return nil, p.fail(p.pos, msgNoValue)
			}
			v, err := p.value(isListAttr(obj, a.Name))
			if err != nil {
				return nil, err
			}
			a.Value = v
		}
		attrs = append(attrs, a)
		p.skipWhite()
		if p.eol() {
			return attrs, nil
		}
		if p.s[p.pos] != ',' {
			return nil, p.fail(p.pos, msgExpectComma)
		}
		p.pos++
		p.skipWhite()
		if p.eol() {
			return nil, p.fail(p.pos, msgNoAttr)
		}
	}
}

// value reads a value up to white space or a comma outside quotes,
// joining quoted and unquoted pieces. The value of a list attribute goes
// on past a comma, as in OpenPBS's qmgr ("managers = a@h,b@h", blanks
// after the comma allowed), unless the comma is followed by the next
// attribute and its operator, by another comma or by nothing.
func (p *parser) value(list bool) (string, error) {
	var b strings.Builder
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if c == ',' && list {
			next := p.pos + 1
			for next < len(p.s) && isWhite(p.s[next]) {
				next++
			}
			if next < len(p.s) && p.s[next] != ',' && !attrFollows(p.s, next) {
				b.WriteByte(',')
				p.pos = next
				continue
			}
		}
		if isWhite(c) || c == ',' {
			break
		}
		if c == '"' || c == '\'' {
			end := strings.IndexByte(p.s[p.pos+1:], c)
			if end < 0 {
				return "", p.fail(p.pos, msgUnmatchedQuote)
			}
			b.WriteString(p.s[p.pos+1 : p.pos+1+end])
			p.pos += end + 2
			continue
		}
		b.WriteByte(c)
		p.pos++
	}
	return b.String(), nil
}

// attrFollows reports whether s holds at byte i an attribute name (with
// any resource) and an operator, which is how an attribute list goes on.
func attrFollows(s string, i int) bool {
	start := i
	for i < len(s) && attrNameByte(s[i]) {
		i++
	}
	if i == start {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) {
			if _, n := opAt(s, i); n > 0 || !(attrNameByte(s[i]) || s[i] == '-' || s[i] == '.') {
				break
			}
			i++
		}
	}
	for i < len(s) && isWhite(s[i]) {
		i++
	}
	_, n := opAt(s, i)
	return n > 0
}

// Quote writes v so that Parse reads it back as one value: unchanged when
// it holds nothing special, otherwise in double quotes, or single quotes
// when it holds a double quote, or as adjacent quoted pieces when it holds
// both. Besides white space, commas and quotes, ';' and '#' are special
// because Split would cut or drop the line there.
func Quote(v string) string {
	if v == "" {
		return `""`
	}
	if !strings.ContainsAny(v, " \t\n\r\v\f,\"';#") {
		return v
	}
	if !strings.Contains(v, `"`) {
		return `"` + v + `"`
	}
	if !strings.Contains(v, `'`) {
		return `'` + v + `'`
	}
	var b strings.Builder
	for v != "" {
		if v[0] == '"' {
			n := len(v) - len(strings.TrimLeft(v, `"`))
			b.WriteString(`'` + v[:n] + `'`)
			v = v[n:]
			continue
		}
		n := strings.IndexByte(v, '"')
		if n < 0 {
			n = len(v)
		}
		b.WriteString(`"` + v[:n] + `"`)
		v = v[n:]
	}
	return b.String()
}
