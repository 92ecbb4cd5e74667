package state

import (
	"slices"
	"strings"

	"github.com/gopbs/gopbs/internal/hook"
)

// Hooks is the site hook table, by name. A hook is replaced whole on a
// change (readers, such as a hook run in progress, may keep the one they
// got).
type Hooks struct {
	byName map[string]*hook.Hook
	gen    uint64 // counts the changes (Gen)
}

// Gen changes at every change of the table: what is derived from it (the
// moms' hooks) is made again when it moved.
func (t *Hooks) Gen() uint64 { return t.gen }

// NewHooks makes an empty table.
func NewHooks() *Hooks { return &Hooks{byName: map[string]*hook.Hook{}} }

// Load replaces the hooks with those of a store snapshot.
func (t *Hooks) Load(hs []*hook.Hook) {
	t.gen++
	t.byName = make(map[string]*hook.Hook, len(hs))
	for _, h := range hs {
		t.byName[h.Name] = h
	}
}

// Get is hook name.
func (t *Hooks) Get(name string) (*hook.Hook, bool) {
	h, ok := t.byName[name]
	return h, ok
}

// Put adds h or replaces the hook of its name with it.
func (t *Hooks) Put(h *hook.Hook) { t.byName[h.Name] = h; t.gen++ }

// Delete removes hook name.
func (t *Hooks) Delete(name string) { delete(t.byName, name); t.gen++ }

// List is every hook, by name.
func (t *Hooks) List() []*hook.Hook {
	out := make([]*hook.Hook, 0, len(t.byName))
	for _, h := range t.byName {
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b *hook.Hook) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Of is the hooks event e runs, in order (hook.Ordered).
func (t *Hooks) Of(e hook.Event) []*hook.Hook {
	if len(t.byName) == 0 {
		return nil
	}
	return hook.Ordered(t.List(), e)
}
