// Package cli holds kraftwatch's subcommands besides `run`: dump, hashes, verify, groups,
// watch, whatif and probe. Each is a function of its arguments and writers that returns
// the exit code (0 success, 1 failure, 2 bad usage; whatif 3 when --max-rebalances is
// exceeded); none reads the process environment except
// through the environ it is handed.
package cli
