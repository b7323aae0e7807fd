#!/usr/bin/env bash
# Fetches the jars of Apache Kafka VERSION from Maven Central into DIR (default
# .cache/kafka/VERSION/libs at the repository root), once; a complete DIR is reused.
#   internal/kafkatest/fetch-kafka.sh 4.4.0
# kafka-shell (kafka-metadata-shell) is not published for every release; when the
# release's own is missing, the newest published one is added beside it.
set -euo pipefail
version=${1:?usage: fetch-kafka.sh VERSION [DIR]}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=${2:-$root/.cache/kafka/$version/libs}
[ -f "$dir/.complete" ] && exit 0
command -v mvn >/dev/null || { echo "fetch-kafka: mvn not found (install maven)" >&2; exit 1; }
mkdir -p "$dir"
echo "fetch-kafka: Apache Kafka $version -> $dir" >&2
mvn -q -B -f "$here/pom.xml" -Dkafka.version="$version" \
  dependency:copy-dependencies -DoutputDirectory="$dir" >&2
shell_ok=
for sv in "$version" 4.3.1; do
  if mvn -q -B dependency:copy -Dartifact="org.apache.kafka:kafka-shell:$sv" \
      -DoutputDirectory="$dir" >/dev/null 2>&1; then
    echo "fetch-kafka: kafka-shell $sv" >&2
    shell_ok=1
    break
  fi
done
[ -n "$shell_ok" ] || echo "fetch-kafka: no kafka-shell jar found; metadata shell helpers will be unavailable" >&2
touch "$dir/.complete"
