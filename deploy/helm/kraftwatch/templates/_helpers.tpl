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
