package hashcache

import "errors"

// ErrUnknownScheme reports a hash scheme name other than "murmur3" and "kafka".
var ErrUnknownScheme = errors.New("hashcache: unknown hash scheme")
