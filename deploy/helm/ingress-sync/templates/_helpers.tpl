{{/*
Names. fullname prefixes the objects of ingress-sync itself; the NATS objects,
the TCP/UDP ConfigMaps and the Secrets keep the fixed names of deploy/base.
*/}}
{{- define "ingress-sync.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else if contains "ingress-sync" .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-ingress-sync" .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "ingress-sync.watcher" -}}{{ include "ingress-sync.fullname" . }}-watcher{{- end -}}
{{- define "ingress-sync.syncer" -}}{{ include "ingress-sync.fullname" . }}-syncer{{- end -}}
{{- define "ingress-sync.defaultBackend" -}}{{ include "ingress-sync.fullname" . }}-defaultbackend{{- end -}}
{{- define "ingress-sync.controllerConfigMap" -}}{{ include "ingress-sync.fullname" . }}-controller{{- end -}}
{{- define "ingress-sync.electionID" -}}{{ .Values.controller.electionID | default (include "ingress-sync.watcher" .) }}{{- end -}}

{{/*
Labels: the selector labels of deploy/base (name, component, part-of), then
the release's. Call with (dict "ctx" $ "name" "ingress-sync" "component" "syncer").
*/}}
{{- define "ingress-sync.selectorLabels" -}}
app.kubernetes.io/name: {{ .name | default "ingress-sync" }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end -}}

{{- define "ingress-sync.labels" -}}
{{ include "ingress-sync.selectorLabels" . }}
app.kubernetes.io/part-of: ingress-sync
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version }}
{{- with .ctx.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The labels of a pod template: the selector labels, part-of, the release. */}}
{{- define "ingress-sync.podLabels" -}}
{{ include "ingress-sync.selectorLabels" . }}
app.kubernetes.io/part-of: ingress-sync
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
{{- with .podLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The NATS objects' labels and selector (deploy/base/nats). */}}
{{- define "ingress-sync.natsSelector" -}}
app.kubernetes.io/name: nats
app.kubernetes.io/part-of: ingress-sync
{{- end -}}

{{/* The ingress-sync image. Call with (dict "ctx" $ "tag" "<override or empty>"). */}}
{{- define "ingress-sync.image" -}}
{{- $v := .ctx.Values.image -}}
{{- if and $v.digest (not .tag) -}}
{{ $v.repository }}@{{ $v.digest }}
{{- else -}}
{{ $v.repository }}:{{ .tag | default $v.tag | default .ctx.Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* The pod security context of the watcher and the syncers (the image's USER). */}}
{{- define "ingress-sync.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* The restricted container security context of every container. */}}
{{- define "ingress-sync.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop:
    - ALL
{{- end -}}

{{/* Preferred anti-affinity: one pod per node where possible. */}}
{{- define "ingress-sync.preferSpread" -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "ingress-sync.selectorLabels" . | nindent 12 }}
{{- end -}}

{{/* True when the chart runs NATS itself. */}}
{{- define "ingress-sync.internalNATS" -}}
{{- if not .Values.nats.external.url }}true{{ end -}}
{{- end -}}

{{/* The client URL of NATS. */}}
{{- define "ingress-sync.natsURL" -}}
{{- if .Values.nats.external.url -}}
{{ .Values.nats.external.url }}
{{- else if .Values.nats.tls.enabled -}}
tls://nats:4222
{{- else -}}
nats://nats:4222
{{- end -}}
{{- end -}}

{{/* The Secret with the CA the clients trust ("" for the system roots). */}}
{{- define "ingress-sync.natsCASecret" -}}
{{- if .Values.nats.external.url -}}
{{ .Values.nats.external.caSecret }}
{{- else if .Values.nats.tls.enabled -}}
{{ .Values.nats.tls.secretName }}
{{- end -}}
{{- end -}}

{{- define "ingress-sync.streamReplicas" -}}
{{- if .Values.stream.replicas -}}
{{ .Values.stream.replicas }}
{{- else if .Values.nats.external.url -}}
{{ fail "stream.replicas: required with nats.external.url (the number of JetStream servers of that NATS, at most 5)" }}
{{- else -}}
{{ .Values.nats.replicas }}
{{- end -}}
{{- end -}}

{{/*
The NATS part of a client's args, env, mounts and volumes. Call with
(dict "ctx" $ "component" "watcher"|"syncer").
*/}}
{{- define "ingress-sync.natsCreds" -}}
{{- $ext := .ctx.Values.nats.external -}}
{{- if .ctx.Values.nats.external.url -}}
{{- index $ext (printf "%sCredentialsSecret" .component) -}}
{{- end -}}
{{- end -}}

{{- define "ingress-sync.natsArgs" -}}
- --nats-url=$(NATS_URL)
{{- if include "ingress-sync.natsCreds" . }}
- --nats-creds=/etc/nats-creds/creds
{{- else if .ctx.Values.nats.external.url }}
- --nats-user={{ index .ctx.Values.nats.external (printf "%sUser" .component) }}
{{- else }}
- --nats-user={{ .component }}
{{- end }}
{{- end -}}

{{- define "ingress-sync.natsEnv" -}}
# The Service nats, or nats.external.url.
- name: NATS_URL
  value: {{ include "ingress-sync.natsURL" .ctx | quote }}
{{- if not (include "ingress-sync.natsCreds" .) }}
# Read as the default of --nats-password, so the password is not on the
# command line.
- name: NATS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .ctx.Values.nats.auth.secretName }}
      key: {{ .component }}-password
{{- end }}
{{- if include "ingress-sync.natsCASecret" .ctx }}
- name: SSL_CERT_FILE
  value: /etc/nats-ca/ca.crt
{{- end }}
{{- end -}}

{{- define "ingress-sync.natsMounts" -}}
{{- if include "ingress-sync.natsCASecret" .ctx }}
- name: nats-ca
  mountPath: /etc/nats-ca
  readOnly: true
{{- end }}
{{- if include "ingress-sync.natsCreds" . }}
- name: nats-creds
  mountPath: /etc/nats-creds
  readOnly: true
{{- end }}
{{- end -}}

{{- define "ingress-sync.natsVolumes" -}}
{{- with include "ingress-sync.natsCASecret" .ctx }}
- name: nats-ca
  secret:
    secretName: {{ . }}
    items:
      - key: ca.crt
        path: ca.crt
{{- end }}
{{- with include "ingress-sync.natsCreds" . }}
- name: nats-creds
  secret:
    secretName: {{ . }}
    items:
      - key: creds
        path: creds
{{- end }}
{{- end -}}

{{/*
The flags both components take from the values (class, ConfigMap), after
their fixed ones.
*/}}
{{- define "ingress-sync.sharedArgs" -}}
{{- if .Values.controller.watchIngressWithoutClass }}
- --watch-ingress-without-class=true
{{- end }}
{{- if include "ingress-sync.hasControllerConfig" . }}
- --configmap=$(POD_NAMESPACE)/{{ include "ingress-sync.controllerConfigMap" . }}
{{- end }}
{{- end -}}

{{- define "ingress-sync.hasControllerConfig" -}}
{{- if or .Values.controller.config .Values.controller.addHeaders .Values.controller.proxySetHeaders }}true{{ end -}}
{{- end -}}

{{/*
extraArgs for one component: the keys of controller.extraArgs that the
component has (flags.yaml: watcher, syncer for `syncer run`, nginx for
`syncer nginx`), then its own extraArgs. Call with
(dict "ctx" $ "component" "watcher"|"syncer"|"nginx" "own" .Values.watcher.extraArgs).
*/}}
{{- define "ingress-sync.extraArgs" -}}
{{- $flags := .ctx.Files.Get "flags.yaml" | fromYaml -}}
{{- $mine := index $flags .component -}}
{{- range $key, $value := .ctx.Values.controller.extraArgs }}
{{- if has $key $mine }}
{{ include "ingress-sync.flag" (list $key $value) }}
{{- end }}
{{- end }}
{{- range $key, $value := .own }}
{{- if not (has $key $mine) }}
{{- fail (printf "%s.extraArgs.%s: not a flag of the %s (flags.yaml)" $.component $key $.component) }}
{{- end }}
{{ include "ingress-sync.flag" (list $key $value) }}
{{- end }}
{{- end -}}

{{/* One flag: --key=value, --key for "", one --key=v per item of a list. */}}
{{- define "ingress-sync.flag" -}}
{{- $key := index . 0 -}}{{- $value := index . 1 -}}
{{- if kindIs "slice" $value -}}
{{- range $i, $v := $value }}{{ if $i }}{{ "\n" }}{{ end }}- {{ printf "--%s=%v" $key $v | quote }}{{ end -}}
{{- else if eq (toString $value) "" -}}
- {{ printf "--%s" $key | quote }}
{{- else -}}
- {{ printf "--%s=%v" $key $value | quote }}
{{- end -}}
{{- end -}}

{{/* The admission webhook: its Secret, Service and configuration. */}}
{{- define "ingress-sync.admission" -}}{{ include "ingress-sync.fullname" . }}-admission{{- end -}}
{{- define "ingress-sync.admissionService" -}}{{ include "ingress-sync.fullname" . }}-controller-admission{{- end -}}
