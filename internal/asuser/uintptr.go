package asuser

import "unsafe"

// uintptrOf passes a slice's first element to a raw system call.
func uintptrOf(p *uint32) uintptr { return uintptr(unsafe.Pointer(p)) }
