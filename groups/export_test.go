package groups

// FilterRecords exposes filterRecords to the external tests.
func FilterRecords(p int, records []byte, from int64) (batch []Message, read, next int64, err error) {
	f, err := filterRecords(p, records, from)
	return f.batch, f.read, f.next, err
}

// FetchPartition is one partition of a Fetch answer as parseFetch reads it.
type FetchPartition = fetchPartition

// ParseFetch exposes parseFetch to the external tests.
var ParseFetch = parseFetch
