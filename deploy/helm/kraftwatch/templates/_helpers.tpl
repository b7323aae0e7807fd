{{- define "kraftwatch.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kraftwatch.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kraftwatch.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kraftwatch.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kraftwatch.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "kraftwatch.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "kraftwatch.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kraftwatch.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
Secrets mounted as files: a list of {volume, secret, dir, items: [{key}]}, one per
Secret reference that is set. Files land at /etc/kraftwatch/<dir>/<key>.
*/}}
{{- define "kraftwatch.secretMounts" -}}
{{- $m := list -}}
{{- range $conn := list "controller" "kafka" -}}
{{- $c := index $.Values $conn -}}
{{- if $c.tls.caSecret.name -}}
{{- $m = append $m (dict "volume" (printf "%s-tls-ca" $conn) "secret" $c.tls.caSecret.name "dir" (printf "%s/tls-ca" $conn) "keys" (list $c.tls.caSecret.key)) -}}
{{- end -}}
{{- if $c.tls.certSecret.name -}}
{{- $m = append $m (dict "volume" (printf "%s-tls-cert" $conn) "secret" $c.tls.certSecret.name "dir" (printf "%s/tls-cert" $conn) "keys" (list $c.tls.certSecret.certKey $c.tls.certSecret.keyKey)) -}}
{{- end -}}
{{- if $c.sasl.passwordSecret.name -}}
{{- $m = append $m (dict "volume" (printf "%s-sasl" $conn) "secret" $c.sasl.passwordSecret.name "dir" (printf "%s/sasl" $conn) "keys" (list $c.sasl.passwordSecret.key)) -}}
{{- end -}}
{{- end -}}
{{- $n := .Values.nats -}}
{{- if $n.credsSecret.name -}}
{{- $m = append $m (dict "volume" "nats-creds" "secret" $n.credsSecret.name "dir" "nats/creds" "keys" (list $n.credsSecret.key)) -}}
{{- end -}}
{{- if $n.tls.caSecret.name -}}
{{- $m = append $m (dict "volume" "nats-tls-ca" "secret" $n.tls.caSecret.name "dir" "nats/tls-ca" "keys" (list $n.tls.caSecret.key)) -}}
{{- end -}}
{{- if $n.tls.certSecret.name -}}
{{- $m = append $m (dict "volume" "nats-tls-cert" "secret" $n.tls.certSecret.name "dir" "nats/tls-cert" "keys" (list $n.tls.certSecret.certKey $n.tls.certSecret.keyKey)) -}}
{{- end -}}
{{- toJson (dict "mounts" $m) -}}
{{- end -}}

{{/* KRAFTWATCH_* variables of one Kafka connection: prefix KAFKA_ or CONTROLLER_. */}}
{{- define "kraftwatch.connEnv" -}}
{{- $c := .conn -}}
{{- $p := printf "KRAFTWATCH_%s" .prefix -}}
{{- if $c.tls.enabled }}
- name: {{ $p }}TLS
  value: "true"
{{- end }}
{{- if $c.tls.caSecret.name }}
- name: {{ $p }}TLS_CA_FILE
  value: /etc/kraftwatch/{{ .dir }}/tls-ca/{{ $c.tls.caSecret.key }}
{{- end }}
{{- if $c.tls.certSecret.name }}
- name: {{ $p }}TLS_CERT_FILE
  value: /etc/kraftwatch/{{ .dir }}/tls-cert/{{ $c.tls.certSecret.certKey }}
- name: {{ $p }}TLS_KEY_FILE
  value: /etc/kraftwatch/{{ .dir }}/tls-cert/{{ $c.tls.certSecret.keyKey }}
{{- end }}
{{- if $c.tls.insecureSkipVerify }}
- name: {{ $p }}TLS_INSECURE_SKIP_VERIFY
  value: "true"
{{- end }}
{{- if $c.sasl.mechanism }}
{{- $_ := required (printf "%s.sasl.passwordSecret.name is required with a SASL mechanism" .dir) $c.sasl.passwordSecret.name }}
- name: {{ $p }}SASL_MECHANISM
  value: {{ $c.sasl.mechanism | quote }}
- name: {{ $p }}SASL_USERNAME
  value: {{ required (printf "%s.sasl.username is required with a SASL mechanism" .dir) $c.sasl.username | quote }}
- name: {{ $p }}SASL_PASSWORD_FILE
  value: /etc/kraftwatch/{{ .dir }}/sasl/{{ $c.sasl.passwordSecret.key }}
{{- end }}
{{- end -}}

{{/* The environment the chart sets for kraftwatch, from its values (extraEnv comes
after it in the Deployment, checked against it). */}}
{{- define "kraftwatch.env" -}}
- name: KRAFTWATCH_CONTROLLER_BOOTSTRAP_SERVERS
  value: {{ .Values.controller.bootstrapServers | quote }}
- name: KRAFTWATCH_BOOTSTRAP_SERVERS
  value: {{ .Values.kafka.bootstrapServers | quote }}
{{- with .Values.clusterId }}
- name: KRAFTWATCH_CLUSTER_ID
  value: {{ . | quote }}
{{- end }}
{{- with include "kraftwatch.connEnv" (dict "conn" .Values.controller "prefix" "CONTROLLER_" "dir" "controller") | trim }}
{{- . | nindent 0 }}
{{- end }}
{{- with include "kraftwatch.connEnv" (dict "conn" .Values.kafka "prefix" "KAFKA_" "dir" "kafka") | trim }}
{{- . | nindent 0 }}
{{- end }}
- name: KRAFTWATCH_NATS_URL
  value: {{ .Values.nats.url | quote }}
- name: KRAFTWATCH_NATS_MODE
  value: {{ .Values.nats.mode | quote }}
{{- with .Values.nats.credsSecret.name }}
- name: KRAFTWATCH_NATS_CREDS_FILE
  value: /etc/kraftwatch/nats/creds/{{ $.Values.nats.credsSecret.key }}
{{- end }}
{{- with .Values.nats.user }}
- name: KRAFTWATCH_NATS_USER
  value: {{ . | quote }}
{{- end }}
{{- with .Values.nats.passwordSecret.name }}
- name: KRAFTWATCH_NATS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.Values.nats.passwordSecret.key }}
{{- end }}
{{- with .Values.nats.tokenSecret.name }}
- name: KRAFTWATCH_NATS_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.Values.nats.tokenSecret.key }}
{{- end }}
{{- with .Values.nats.tls.caSecret.name }}
- name: KRAFTWATCH_NATS_TLS_CA_FILE
  value: /etc/kraftwatch/nats/tls-ca/{{ $.Values.nats.tls.caSecret.key }}
{{- end }}
{{- with .Values.nats.tls.certSecret.name }}
- name: KRAFTWATCH_NATS_TLS_CERT_FILE
  value: /etc/kraftwatch/nats/tls-cert/{{ $.Values.nats.tls.certSecret.certKey }}
- name: KRAFTWATCH_NATS_TLS_KEY_FILE
  value: /etc/kraftwatch/nats/tls-cert/{{ $.Values.nats.tls.certSecret.keyKey }}
{{- end }}
- name: KRAFTWATCH_SUBJECT_PREFIX
  value: {{ .Values.subjectPrefix | quote }}
{{- with .Values.stream.name }}
- name: KRAFTWATCH_STREAM_NAME
  value: {{ . | quote }}
{{- end }}
{{- with .Values.stream.events }}
- name: KRAFTWATCH_EVENTS_STREAM
  value: {{ . | quote }}
{{- end }}
- name: KRAFTWATCH_STREAM_REPLICAS
  value: {{ .Values.stream.replicas | quote }}
- name: KRAFTWATCH_STREAM_MAX_AGE
  value: {{ .Values.stream.maxAge | quote }}
- name: KRAFTWATCH_STREAM_MAX_MSGS_PER_SUBJECT
  value: {{ .Values.stream.maxMsgsPerSubject | quote }}
- name: KRAFTWATCH_HASH_SCHEME
  value: {{ .Values.hashScheme | quote }}
- name: KRAFTWATCH_STALL_AFTER
  value: {{ .Values.stallAfter | quote }}
- name: KRAFTWATCH_COORDINATOR_MISMATCH_AFTER
  value: {{ .Values.coordinatorMismatchAfter | quote }}
- name: KRAFTWATCH_GROUP_INCLUDE
  value: {{ .Values.groups.include | quote }}
{{- with .Values.groups.exclude }}
- name: KRAFTWATCH_GROUP_EXCLUDE
  value: {{ . | quote }}
{{- end }}
{{- with .Values.groups.metrics }}
- name: KRAFTWATCH_GROUP_METRICS
  value: {{ . | quote }}
{{- end }}
- name: KRAFTWATCH_REBALANCED_EVENTS
  value: {{ .Values.groups.rebalancedEvents | quote }}
- name: KRAFTWATCH_HTTP_ADDR
  value: ":{{ .Values.httpPort }}"
- name: KRAFTWATCH_LOG_LEVEL
  value: {{ .Values.log.level | quote }}
- name: KRAFTWATCH_LOG_FORMAT
  value: {{ .Values.log.format | quote }}
{{- end }}

{{/* The TCP ports kraftwatch dials, comma-separated: the port of every address in
controller.bootstrapServers, kafka.bootstrapServers and nats.url (a NATS URL without
one: 4222), and networkPolicy.egress.ports besides. */}}
{{- define "kraftwatch.egressPorts" -}}
{{- $ports := list }}
{{- range $addrs := list .Values.controller.bootstrapServers .Values.kafka.bootstrapServers }}
{{- range splitList "," $addrs }}
{{- with regexFind ":[0-9]+$" (trim .) }}{{ $ports = append $ports (trimPrefix ":" . | atoi) }}{{ end }}
{{- end }}
{{- end }}
{{- range splitList "," .Values.nats.url }}
{{- $u := trim . }}
{{- if $u }}
{{- $port := regexFind ":[0-9]+$" $u }}
{{- $ports = append $ports (ternary (trimPrefix ":" $port | atoi) 4222 (ne $port "")) }}
{{- end }}
{{- end }}
{{- range .Values.networkPolicy.egress.ports }}{{ $ports = append $ports (int .) }}{{ end }}
{{- $ports | uniq | sortAlpha | join "," }}
{{- end }}
