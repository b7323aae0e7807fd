#!/usr/bin/env bash
# Fetches the jars of Apache Kafka VERSION from Maven Central, once, into
# .cache/kafka/VERSION/ at the repository root:
#   libs/     the broker, the controller and Kafka's tools (kafka-storage, kafka-topics,
#             kafka-console-consumer, kafka-dump-log)
#   shell/    kafka-metadata-shell (artifact kafka-shell) and its classpath. It is not
#             published for every release (4.4.0 lacks it; an older shell cannot read a
#             newer metadata.version), so shell/ is left out when it is missing.
#   streams/  the kafka-streams jar alone (its dependencies are in libs/; RocksDB is
#             left out: the test bed's Streams application keeps its stores in memory)
#   internal/kafkatest/fetch-kafka.sh 4.3.1
set -euo pipefail
version=${1:?usage: fetch-kafka.sh VERSION}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=$root/.cache/kafka/$version
complete() { [ -f "$dir/.complete" ] && [ -f "$dir/streams/.complete" ]; }
complete && exit 0
mkdir -p "$root/.cache/kafka"
exec 9>"$root/.cache/kafka/.lock"
flock 9 # test packages run in parallel; one of them fetches
complete && exit 0
command -v mvn >/dev/null || { echo "fetch-kafka: mvn not found (apt-get install maven)" >&2; exit 1; }
command -v java >/dev/null || { echo "fetch-kafka: java not found (apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
copy() { # copy PROFILE_ARGS VERSION OUTDIR
  mvn -q -B -f "$here/pom.xml" $1 -Dkafka.version="$2" \
    dependency:copy-dependencies -DoutputDirectory="$3"
}
if [ ! -f "$dir/.complete" ]; then
  rm -rf "$dir" && mkdir -p "$dir"
  echo "fetch-kafka: Apache Kafka $version -> $dir" >&2
  copy "" "$version" "$dir/libs" >&2
  if ! copy -Pshell "$version" "$dir/shell" >/dev/null 2>&1; then
    echo "fetch-kafka: kafka-shell $version is not on Maven Central; no kafka-metadata-shell" >&2
    rm -rf "$dir/shell"
  fi
  touch "$dir/.complete"
fi
# A cache fetched before streams/ existed gets it added.
echo "fetch-kafka: kafka-streams $version -> $dir/streams" >&2
rm -rf "$dir/streams"
copy "-Pstreams -DexcludeTransitive=true -DincludeArtifactIds=kafka-streams" "$version" "$dir/streams" >&2
touch "$dir/streams/.complete"
