// Package archtest holds no code: its test checks the import rules of
// ARCHITECTURE.md ("What may import what") over the whole module, so that
// a change that breaks the layering fails the build's tests instead of
// surviving until someone notices.
package archtest
