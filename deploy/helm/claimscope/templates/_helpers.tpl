{{/* Names and labels. */}}
{{- define "claimscope.fullname" -}}
{{- if contains "claimscope" .Release.Name -}}
{{- .Release.Name | trunc 53 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-claimscope" .Release.Name | trunc 53 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "claimscope.labels" -}}
app.kubernetes.io/name: claimscope
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "claimscope.selector" -}}
app.kubernetes.io/name: claimscope
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "claimscope.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}{{ default (include "claimscope.fullname" .) .Values.serviceAccount.name }}{{- else -}}{{ default "default" .Values.serviceAccount.name }}{{- end -}}
{{- end -}}

{{- define "claimscope.image" -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}

{{/* Secrets: each from an existing Secret, or from the one the chart creates. */}}
{{- define "claimscope.chartSecret" -}}{{ include "claimscope.fullname" . }}-secrets{{- end -}}

{{- define "claimscope.needsChartSecret" -}}
{{- $v := .Values -}}
{{- if or (and (not $v.secrets.secretKey.existingSecret) $v.secrets.secretKey.value) (and (not $v.secrets.databaseUrl.existingSecret) $v.secrets.databaseUrl.value) (and $v.oidc.enabled (not $v.oidc.clientSecret.existingSecret) $v.oidc.clientSecret.value) (and (not $v.metrics.token.existingSecret) $v.metrics.token.value) -}}true{{- end -}}
{{- end -}}

{{- define "claimscope.checkSecrets" -}}
{{- $v := .Values -}}
{{- if not (or $v.secrets.secretKey.existingSecret $v.secrets.secretKey.value) -}}
{{- fail "secrets.secretKey: give existingSecret (and key) or value" -}}
{{- end -}}
{{- if not (or $v.secrets.databaseUrl.existingSecret $v.secrets.databaseUrl.value) -}}
{{- fail "secrets.databaseUrl: give existingSecret (and key) or value (PostgreSQL is yours to provide)" -}}
{{- end -}}
{{- if and $v.oidc.enabled (not (or $v.oidc.clientSecret.existingSecret $v.oidc.clientSecret.value)) -}}
{{- fail "oidc.clientSecret: give existingSecret (and key) or value" -}}
{{- end -}}
{{- end -}}

{{- define "claimscope.hasMetricsToken" -}}
{{- if or .Values.metrics.token.existingSecret .Values.metrics.token.value -}}true{{- end -}}
{{- end -}}

{{/* One projected volume: every secret file the pods read, from wherever it lives. */}}
{{- define "claimscope.secretVolume" -}}
- name: secrets
  projected:
    defaultMode: 0440
    sources:
      - secret:
          name: {{ default (include "claimscope.chartSecret" .) .Values.secrets.secretKey.existingSecret }}
          items: [{key: {{ .Values.secrets.secretKey.key }}, path: secret-key}]
      - secret:
          name: {{ default (include "claimscope.chartSecret" .) .Values.secrets.databaseUrl.existingSecret }}
          items: [{key: {{ .Values.secrets.databaseUrl.key }}, path: database-url}]
      {{- if .Values.oidc.enabled }}
      - secret:
          name: {{ default (include "claimscope.chartSecret" .) .Values.oidc.clientSecret.existingSecret }}
          items: [{key: {{ .Values.oidc.clientSecret.key }}, path: oidc-client-secret}]
      {{- end }}
      {{- if include "claimscope.hasMetricsToken" . }}
      - secret:
          name: {{ default (include "claimscope.chartSecret" .) .Values.metrics.token.existingSecret }}
          items: [{key: {{ .Values.metrics.token.key }}, path: metrics-token}]
      {{- end }}
- name: tmp
  emptyDir: {sizeLimit: 256Mi}
{{- end -}}

{{- define "claimscope.env" -}}
- name: POD_IP
  valueFrom: {fieldRef: {fieldPath: status.podIP}}
# Kubelet probes and Prometheus address the pod by IP: allow it as a host name.
- name: ALLOWED_HOSTS
  value: "{{ .Values.host }},$(POD_IP),localhost"
- name: SECRET_KEY_FILE
  value: /run/secrets/claimscope/secret-key
- name: DATABASE_URL_FILE
  value: /run/secrets/claimscope/database-url
{{- if .Values.oidc.enabled }}
- name: OIDC_RP_CLIENT_SECRET_FILE
  value: /run/secrets/claimscope/oidc-client-secret
{{- end }}
{{- if include "claimscope.hasMetricsToken" . }}
- name: METRICS_TOKEN_FILE
  value: /run/secrets/claimscope/metrics-token
{{- end }}
{{- end -}}

{{- define "claimscope.container" -}}
image: {{ include "claimscope.image" . }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
env:
  {{- include "claimscope.env" . | nindent 2 }}
envFrom:
  - configMapRef: {name: {{ include "claimscope.fullname" . }}-settings}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities: {drop: ["ALL"]}
volumeMounts:
  - {name: secrets, mountPath: /run/secrets/claimscope, readOnly: true}
  - {name: tmp, mountPath: /tmp}
{{- end -}}

{{/* Pod spec parts shared by web, worker, beat and the migrate Job. */}}
{{- define "claimscope.podCommon" -}}
serviceAccountName: {{ include "claimscope.serviceAccountName" . }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets: {{ toYaml . | nindent 2 }}
{{- end }}
securityContext: {{ toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.nodeSelector }}
nodeSelector: {{ toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations: {{ toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity: {{ toYaml . | nindent 2 }}
{{- end }}
volumes:
  {{- include "claimscope.secretVolume" . | nindent 2 }}
{{- end -}}

{{/* Gate on the migrate Job: wait until no migration is left unapplied. */}}
{{- define "claimscope.waitForMigrations" -}}
- name: wait-for-migrations
  {{- include "claimscope.container" . | nindent 2 }}
  command: ["sh", "-c", "until python manage.py migrate --check >/dev/null 2>&1; do echo waiting for migrations; sleep 5; done"]
  resources:
    requests: {cpu: 50m, memory: 128Mi}
    limits: {memory: 256Mi}
{{- end -}}

{{- define "claimscope.redisUrl" -}}
{{- if .Values.redis.bundled -}}redis://{{ include "claimscope.fullname" . }}-redis:6379{{- else -}}{{ required "redis.url: give a Redis URL or set redis.bundled" .Values.redis.url | trimSuffix "/" }}{{- end -}}
{{- end -}}
