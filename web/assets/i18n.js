// English and Chinese strings. t(key, vars) looks a key up in the current
// language, falls back to English, and fills {name} placeholders.
const en = {
  'skip': 'Skip to content', 'language': 'Language', 'logout': 'Log out',
  'login.title': 'Log in to Skiff', 'login.token': 'Token', 'login.submit': 'Log in',
  'login.hint': 'The admin token, or the read-only dashboard token (data dir: tokens/dashboard).',
  'login.bad': 'That token was refused.', 'login.err': 'Login failed: {msg}',
  'login.slow': 'Too many refused tokens from this address: wait a few seconds and try again.',
  'nav.overview': 'Overview', 'nav.services': 'Services', 'nav.deployments': 'Deployments',
  'nav.pods': 'Pods', 'nav.nodes': 'Nodes', 'nav.events': 'Events', 'nav.create': 'Create',
  'live.on': 'Live', 'live.off': 'Reconnecting…', 'live.sync': 'Syncing…',
  'readonly': 'read-only', 'readonly.why': 'This session is read-only.',
  'loading': 'Loading…', 'none': 'None', 'all': 'All namespaces', 'namespace': 'Namespace',
  'name': 'Name', 'type': 'Type', 'clusterIP': 'Cluster IP', 'ports': 'Ports',
  'externalIPs': 'External IPs', 'endpoints': 'Endpoints', 'ready': 'Ready', 'notReady': 'Not ready', 'age': 'Age',
  'node': 'Node', 'ip': 'IP', 'status': 'Status', 'restarts': 'Restarts', 'logs': 'Logs',
  'podCIDR': 'Pod CIDR', 'addresses': 'Addresses', 'version': 'Version', 'selector': 'Selector',
  'replicas': 'Replicas', 'updated': 'Updated', 'available': 'Available', 'rollout': 'Rollout',
  'actions': 'Actions', 'scale': 'Scale', 'restart': 'Restart', 'reason': 'Reason',
  'object': 'Object', 'message': 'Message', 'count': 'Count', 'last': 'Last seen',
  'ov.title': 'Overview', 'ov.nodes': 'Nodes ready', 'ov.pods': 'Pods running', 'ov.services': 'Services',
  'ov.deployments': 'Deployments available', 'ov.health': 'API health', 'ov.events': 'Recent events',
  'healthy': 'healthy', 'unhealthy': 'unhealthy',
  'ov.attention': 'Services with endpoints not ready', 'ov.allGood': 'Every selected Service has all its endpoints ready.',
  'svc.title': 'Services', 'svc.count': '{n} services', 'svc.readyOf': '{ready} of {total} ready',
  'svc.detail': 'Service {name}', 'svc.slices': 'EndpointSlices', 'svc.podsByNode': 'Pods by node',
  'svc.noSelector': 'No selector: endpoints are managed by hand.', 'svc.noPods': 'No pods match the selector.',
  'svc.notFound': 'Service {name} not found (yet).', 'svc.back': 'All services',
  'ep.serving': 'serving', 'ep.terminating': 'terminating', 'ep.addresses': 'Addresses', 'ep.conditions': 'Conditions',
  'trace.title': 'Packet path', 'trace.client': 'Client pod', 'trace.url': 'URL', 'trace.run': 'Trace',
  'trace.unavailable': 'This server cannot trace (no trace source).', 'trace.noClient': 'No running pod to start from.',
  'trace.running': 'Tracing…', 'trace.failed': 'Trace failed: {msg}', 'trace.warnings': 'Warnings',
  'trace.rulesText': 'Rules as the kernel lists them', 'trace.conntrack': 'Conntrack entries',
  'trace.step.egress': 'Leaving the cluster', 'trace.egressMasq': 'masqueraded: the source becomes the node\'s address',
  'trace.egressNoMasq': 'not masqueraded: the source stays the pod\'s address', 'trace.egressRules': 'Egress rules as the kernel lists them',
  'trace.noDNS': 'no DNS (an IP)', 'trace.noService': 'no Service matches', 'trace.noRules': 'no rules read',
  'trace.step.client': 'Client', 'trace.step.dns': 'DNS answer', 'trace.step.vip': 'Service VIP',
  'trace.step.rules': 'Rules ({mode})', 'trace.step.pods': 'Pods on nodes', 'trace.prob': '{p} of new connections',
  'trace.moreRules': '+{n} more (all below)', 'trace.choices': 'tried in order, each taken with its probability when reached: {list}',
  'trace.choicesShare': 'each endpoint’s share of new connections: {list}',
  'dep.title': 'Deployments', 'dep.scaled': '{name} scaled to {n}.', 'dep.restarted': '{name} restarting.',
  'dep.progress': '{updated} of {desired} updated', 'dep.complete': 'complete',
  'pod.title': 'Pods', 'pod.logsOf': 'Logs of {name}', 'pod.noLogs': 'No logs: {msg}', 'pod.close': 'Close logs',
  'pod.container': 'Container', 'pod.refresh': 'Refresh',
  'node.title': 'Nodes', 'ev.title': 'Events',
  'create.title': 'Create', 'create.svc': 'Create a Service', 'create.apply': 'Apply a YAML manifest',
  'create.selector': 'Selector (app=web,tier=front)', 'create.ports': 'Ports (80:8080/TCP, 53/UDP)',
  'create.submit': 'Create Service', 'create.done': 'Service {name} created.',
  'create.manifest': 'Manifest', 'create.applyBtn': 'Apply', 'create.applied': '{kind} {name}: {action}',
  'apply.created': 'created', 'apply.configured': 'configured', 'apply.unchanged': 'unchanged', 'apply.error': 'error',
  'create.applyNs': 'Namespace of objects that name none',
  'create.applyHint': 'As kubectl apply: objects are created, or patched by a three-way merge with the configuration last applied (a field removed here is removed from the object).',
  'create.badPorts': 'Ports must look like 80 or 80:8080/TCP.', 'create.badSelector': 'A selector is key=value pairs separated by commas.',
  'error': 'Error: {msg}', 'forbidden': 'Refused: {msg}',
};
const zh = {
  'skip': '跳到内容', 'language': '语言', 'logout': '退出登录',
  'login.title': '登录 Skiff', 'login.token': '令牌', 'login.submit': '登录',
  'login.hint': '管理员令牌，或只读的仪表板令牌（数据目录：tokens/dashboard）。',
  'login.bad': '令牌被拒绝。', 'login.err': '登录失败：{msg}',
  'login.slow': '此地址被拒绝的令牌过多：请等几秒后再试。',
  'nav.overview': '概览', 'nav.services': '服务', 'nav.deployments': '部署',
  'nav.pods': 'Pod', 'nav.nodes': '节点', 'nav.events': '事件', 'nav.create': '创建',
  'live.on': '实时', 'live.off': '正在重连…', 'live.sync': '正在同步…',
  'readonly': '只读', 'readonly.why': '此会话为只读。',
  'loading': '加载中…', 'none': '无', 'all': '所有命名空间', 'namespace': '命名空间',
  'name': '名称', 'type': '类型', 'clusterIP': '集群 IP', 'ports': '端口',
  'externalIPs': '外部 IP', 'endpoints': '端点', 'ready': '就绪', 'notReady': '未就绪', 'age': '存在时间',
  'node': '节点', 'ip': 'IP', 'status': '状态', 'restarts': '重启次数', 'logs': '日志',
  'podCIDR': 'Pod 网段', 'addresses': '地址', 'version': '版本', 'selector': '选择算符',
  'replicas': '副本', 'updated': '已更新', 'available': '可用', 'rollout': '上线进度',
  'actions': '操作', 'scale': '扩缩', 'restart': '重启', 'reason': '原因',
  'object': '对象', 'message': '消息', 'count': '次数', 'last': '最近一次',
  'ov.title': '概览', 'ov.nodes': '就绪节点', 'ov.pods': '运行中的 Pod', 'ov.services': '服务',
  'ov.deployments': '可用的部署', 'ov.health': 'API 健康状况', 'ov.events': '最近事件',
  'healthy': '健康', 'unhealthy': '不健康',
  'ov.attention': '端点未就绪的服务', 'ov.allGood': '所有带选择算符的服务的端点都已就绪。',
  'svc.title': '服务', 'svc.count': '{n} 个服务', 'svc.readyOf': '{total} 个中 {ready} 个就绪',
  'svc.detail': '服务 {name}', 'svc.slices': 'EndpointSlice', 'svc.podsByNode': '按节点列出的 Pod',
  'svc.noSelector': '没有选择算符：端点由人工管理。', 'svc.noPods': '没有 Pod 匹配选择算符。',
  'svc.notFound': '服务 {name} 不存在（暂未出现）。', 'svc.back': '全部服务',
  'ep.serving': '可服务', 'ep.terminating': '终止中', 'ep.addresses': '地址', 'ep.conditions': '状况',
  'trace.title': '数据包路径', 'trace.client': '客户端 Pod', 'trace.url': 'URL', 'trace.run': '追踪',
  'trace.unavailable': '此服务器无法追踪（没有追踪来源）。', 'trace.noClient': '没有可作为起点的运行中 Pod。',
  'trace.running': '追踪中…', 'trace.failed': '追踪失败：{msg}', 'trace.warnings': '警告',
  'trace.rulesText': '内核列出的规则', 'trace.conntrack': 'conntrack 条目',
  'trace.step.egress': '离开集群', 'trace.egressMasq': '已伪装（MASQUERADE）：源地址变为节点地址',
  'trace.egressNoMasq': '未伪装：源地址仍是 Pod 地址', 'trace.egressRules': '内核列出的出口规则',
  'trace.noDNS': '无 DNS（IP 地址）', 'trace.noService': '没有匹配的服务', 'trace.noRules': '未读取到规则',
  'trace.step.client': '客户端', 'trace.step.dns': 'DNS 应答', 'trace.step.vip': '服务虚拟 IP',
  'trace.step.rules': '规则（{mode}）', 'trace.step.pods': '各节点上的 Pod', 'trace.prob': '新连接的 {p}',
  'trace.moreRules': '另有 {n} 条（全部见下方）', 'trace.choices': '按顺序尝试，到达时各以其概率命中：{list}',
  'trace.choicesShare': '各端点分得的新连接比例：{list}',
  'dep.title': '部署', 'dep.scaled': '{name} 已扩缩到 {n}。', 'dep.restarted': '{name} 正在重启。',
  'dep.progress': '{desired} 个中 {updated} 个已更新', 'dep.complete': '完成',
  'pod.title': 'Pod', 'pod.logsOf': '{name} 的日志', 'pod.noLogs': '没有日志：{msg}', 'pod.close': '关闭日志',
  'pod.container': '容器', 'pod.refresh': '刷新',
  'node.title': '节点', 'ev.title': '事件',
  'create.title': '创建', 'create.svc': '创建服务', 'create.apply': '应用 YAML 清单',
  'create.selector': '选择算符（app=web,tier=front）', 'create.ports': '端口（80:8080/TCP, 53/UDP）',
  'create.submit': '创建服务', 'create.done': '服务 {name} 已创建。',
  'create.manifest': '清单', 'create.applyBtn': '应用', 'create.applied': '{kind} {name}：{action}',
  'apply.created': '已创建', 'apply.configured': '已更新', 'apply.unchanged': '未改变', 'apply.error': '出错',
  'create.applyNs': '未写命名空间的对象放入',
  'create.applyHint': '与 kubectl apply 相同：对象不存在则创建，存在则与上次应用的配置做三方合并（此处删去的字段会从对象中删除）。',
  'create.badPorts': '端口格式应为 80 或 80:8080/TCP。', 'create.badSelector': '选择算符是以逗号分隔的 key=value。',
  'error': '错误：{msg}', 'forbidden': '被拒绝：{msg}',
};
const dicts = { en, zh };
let cur = 'en';

export function lang() { return cur; }

export function setLang(l) {
  cur = dicts[l] ? l : 'en';
  try { localStorage.setItem('skiff.lang', cur); } catch (e) { /* private mode */ }
  document.documentElement.lang = cur === 'zh' ? 'zh-CN' : 'en';
}

export function initialLang() {
  let l = null;
  try { l = localStorage.getItem('skiff.lang'); } catch (e) { /* private mode */ }
  if (!l) l = (navigator.language || '').toLowerCase().startsWith('zh') ? 'zh' : 'en';
  return l;
}

export function t(key, vars) {
  let s = dicts[cur][key] ?? en[key] ?? key;
  if (vars) s = s.replace(/\{(\w+)\}/g, (m, k) => (vars[k] ?? m));
  return s;
}

// applyI18n fills every [data-i18n] element under root.
export function applyI18n(root) {
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
}
