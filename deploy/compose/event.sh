#!/bin/sh
# Makes kraftwatch announce a rebalance: creates a topic, reads it with a consumer
# group, waits until the group has its member, then adds a partition. Run by
# `docker compose run --rm event` (compose.yaml, profile event), in Kafka's image;
# kraftwatch watch then prints the group's first event, one saying partitions_added,
# and one when the script's member leaves. e2e TestComposeEventScript runs it.
#   KAFKA_BIN  Kafka's bin directory (default /opt/kafka/bin)
#   BOOTSTRAP  a broker (default kafka:9092)
set -eu
bin=${KAFKA_BIN:-/opt/kafka/bin}
bootstrap=${BOOTSTRAP:-kafka:9092}
topic=orders-$(date +%s)
group=$topic-app

"$bin/kafka-topics.sh" --bootstrap-server "$bootstrap" --create --topic "$topic" --partitions 1
"$bin/kafka-console-consumer.sh" --bootstrap-server "$bootstrap" --topic "$topic" --group "$group" \
	--command-property group.protocol=consumer >/dev/null 2>&1 &
consumer=$!
trap 'kill $consumer 2>/dev/null || true' EXIT
i=0
until "$bin/kafka-consumer-groups.sh" --bootstrap-server "$bootstrap" --describe --group "$group" --members 2>/dev/null | grep -q "^$group "; do
	i=$((i + 1))
	if [ "$i" -gt 60 ]; then
		echo "event.sh: group $group has no member after 60 s" >&2
		exit 1
	fi
	sleep 1
done
echo "group $group reads $topic"
# The first group of a cluster creates __consumer_offsets, which kraftwatch then finds
# within a few seconds: give it those, so that it sees the group before the change.
sleep 5
"$bin/kafka-topics.sh" --bootstrap-server "$bootstrap" --alter --topic "$topic" --partitions 2
echo "added a partition to $topic: kraftwatch announces that $group must rebalance"
# Stay until the group reads the new partition, so that its member leaves (and
# kraftwatch announces that too) only after the rebalance.
i=0
until "$bin/kafka-consumer-groups.sh" --bootstrap-server "$bootstrap" --describe --group "$group" 2>/dev/null | grep -q "^$group  *$topic  *1 "; do
	i=$((i + 1))
	if [ "$i" -gt 60 ]; then
		echo "event.sh: group $group does not read partition 1 after 60 s" >&2
		exit 1
	fi
	sleep 1
done
echo "$group rebalanced onto partition 1; its member leaves now"
