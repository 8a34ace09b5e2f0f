<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN" sourcelanguage="en">
<context>
    <name>Actions</name>
    <message>
        <source>exited</source>
        <translation>已退出</translation>
    </message>
    <message>
        <source>is still running after {grace} s</source>
        <translation>{grace} 秒后仍在运行</translation>
    </message>
    <message>
        <source>was not signalled: the PID now belongs to another process</source>
        <translation>未发送信号：该 PID 现在属于另一个进程</translation>
    </message>
    <message>
        <source>had already exited</source>
        <translation>早已退出</translation>
    </message>
    <message>
        <source>was not signalled: permission denied (another user&apos;s process)</source>
        <translation>未发送信号：权限不足（其他用户的进程）</translation>
    </message>
    <message>
        <source>&amp;Add host…</source>
        <translation>添加主机(&amp;A)…</translation>
    </message>
    <message>
        <source>&amp;Edit selected host…</source>
        <translation>编辑所选主机(&amp;E)…</translation>
    </message>
    <message>
        <source>&amp;Remove selected host…</source>
        <translation>移除所选主机(&amp;R)…</translation>
    </message>
    <message>
        <source>&amp;Import from ~/.ssh/config…</source>
        <translation>从 ~/.ssh/config 导入(&amp;I)…</translation>
    </message>
    <message>
        <source>Import from a &amp;provider…</source>
        <translation>从云服务商导入(&amp;P)…</translation>
    </message>
    <message>
        <source>&amp;Watchdog on the selected host…</source>
        <translation>所选主机上的看门狗(&amp;W)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>sending {signal} to PID {pid} on {host}…</source>
        <translation>正在向 {host} 上的 PID {pid} 发送 {signal}…</translation>
    </message>
    <message>
        <source>{signal} → PID {pid} ({name}) on {host}: {what}</source>
        <translation>{signal} → {host} 上的 PID {pid}（{name}）：{what}</translation>
    </message>
    <message>
        <source>{n} processes in its tree</source>
        <translation>其进程树中的 {n} 个进程</translation>
    </message>
    <message>
        <source>PID {pid} did not exit within {grace} s of TERM.</source>
        <translation>PID {pid} 在收到 TERM 后 {grace} 秒内没有退出。</translation>
    </message>
    <message>
        <source>{signal} → PID {pid} on {host} failed: {error}</source>
        <translation>{signal} → {host} 上的 PID {pid} 失败：{error}</translation>
    </message>
    <message>
        <source>{host}: billing set to {state}</source>
        <translation>{host}：计费状态已设为 {state}</translation>
    </message>
    <message>
        <source>select a host first</source>
        <translation>请先选择一台主机</translation>
    </message>
    <message>
        <source>{name} saved; restart gpufleet without --demo to watch your hosts</source>
        <translation>已保存 {name}；请不带 --demo 重新启动 gpufleet 来监控你的主机</translation>
    </message>
    <message>
        <source>{name} saved; connecting…</source>
        <translation>已保存 {name}；正在连接…</translation>
    </message>
</context>
<context>
    <name>AlertWiring</name>
    <message>
        <source>Webhook not used: %1</source>
        <translation>未使用 Webhook：%1</translation>
    </message>
    <message>
        <source>In %1 s: %2. Right-click the alert to cancel.</source>
        <translation>%1 秒后：%2。右键单击告警可取消。</translation>
    </message>
    <message>
        <source>(dry run: it will only be logged)</source>
        <translation>（演练：只记录日志，不执行）</translation>
    </message>
    <message>
        <source>Dry run, not executed: %1</source>
        <translation>演练，未执行：%1</translation>
    </message>
    <message>
        <source>Cancelled: %1</source>
        <translation>已取消：%1</translation>
    </message>
    <message>
        <source>Ran: %1</source>
        <translation>已执行：%1</translation>
    </message>
    <message>
        <source>Failed: %1: %2</source>
        <translation>失败：%1：%2</translation>
    </message>
    <message>
        <source>Webhook %1 not delivered after %2 attempts: %3</source>
        <translation>Webhook %1 尝试 %2 次后仍未送达：%3</translation>
    </message>
    <message>
        <source>acknowledged</source>
        <translation>已确认</translation>
    </message>
    <message>
        <source>snoozed until %1</source>
        <translation>已暂停提醒至 %1</translation>
    </message>
    <message>
        <source>%1 command pending: “%2”</source>
        <translation>%1 命令待执行：“%2”</translation>
    </message>
    <message>
        <source>Too late to cancel: the action has started.</source>
        <translation>来不及取消：动作已开始执行。</translation>
    </message>
    <message>
        <source>Open at the moment it started</source>
        <translation>打开到告警开始的时刻</translation>
    </message>
    <message>
        <source>Acknowledge</source>
        <translation>确认</translation>
    </message>
    <message>
        <source>Snooze</source>
        <translation>暂停提醒</translation>
    </message>
    <message numerus="yes">
        <source>for %n hour(s)</source>
        <translation>
            <numerusform>%n 小时</numerusform>
        </translation>
    </message>
    <message>
        <source>Cancel the %1 command “%2”</source>
        <translation>取消 %1 命令“%2”</translation>
    </message>
</context>
<context>
    <name>Alerts</name>
    <message>
        <source>the host</source>
        <translation>该主机</translation>
    </message>
    <message>
        <source>MIG slice {slot} of GPU {parent}</source>
        <translation>GPU {parent} 的 MIG 切片 {slot}</translation>
    </message>
    <message>
        <source>GPU {gpu}</source>
        <translation>GPU {gpu}</translation>
    </message>
    <message>
        <source>MIG slice {slot} of GPU {parent} of {host}</source>
        <translation>{host} 上 GPU {parent} 的 MIG 切片 {slot}</translation>
    </message>
    <message>
        <source>GPU {gpu} of {host}</source>
        <translation>{host} 的 GPU {gpu}</translation>
    </message>
    <message>
        <source>Thermal throttling on {where}</source>
        <translation>{where} 温度过高降频</translation>
    </message>
    <message>
        <source>{Where} has been slowed by its temperature ({reasons}) for {window}: its SM clock is {clock} MHz, {clock_pct} of its {clock_max} MHz maximum, at {temp} °C (slowdown at {slowdown} °C). Utilization can still read 99 %: the GPU is busy, just slower.</source>
        <translation>{Where} 因温度过高已降频 {window}（{reasons}）：SM 频率为 {clock} MHz，只有最高 {clock_max} MHz 的 {clock_pct}，温度 {temp} °C（降频阈值 {slowdown} °C）。利用率仍可能显示 99 %：GPU 一直在忙，只是变慢了。</translation>
    </message>
    <message>
        <source>About {lost_pct} of the compute you pay {price}/h for is lost: roughly {waste} an hour.</source>
        <translation>你按 {price}/小时 付费的算力约有 {lost_pct} 被浪费：每小时约 {waste}。</translation>
    </message>
    <message>
        <source>Compare with the other GPUs: if only this one is hot, its cooling is at fault. Save this evidence and ask the provider to fix the cooling or move you to another machine.</source>
        <translation>和其他 GPU 对比：如果只有这张卡温度高，就是它的散热有问题。保存这份证据，要求服务商修好散热或给你换一台机器。</translation>
    </message>
    <message>
        <source>HW slowdown on {where}</source>
        <translation>{where} 硬件降频</translation>
    </message>
    <message>
        <source>{Where} has been held down by its hardware slowdown signal ({reasons}) for {window}: its SM clock is {clock} MHz, {clock_pct} of its {clock_max} MHz maximum, at {temp} °C and {power} W. A healthy GPU never asserts it: the board&apos;s over-temperature or power-supply protection is tripping.</source>
        <translation>{Where} 被其硬件降频信号（{reasons}）压低已有 {window}：SM 频率 {clock} MHz，为最高 {clock_max} MHz 的 {clock_pct}，温度 {temp} °C，功率 {power} W。健康的 GPU 从不触发该信号：板卡的过温或供电保护正在动作。</translation>
    </message>
    <message>
        <source>A fault of the machine, not of your job: save this evidence and ask the provider to check its power supply and cooling, or to move you to another machine.</source>
        <translation>这是机器的故障，不是您任务的问题：保存这些证据，请服务商检查其供电和散热，或为您更换机器。</translation>
    </message>
    <message>
        <source>Clocks held low by a setting on {where}</source>
        <translation>{where} 的频率被设置压低</translation>
    </message>
    <message>
        <source>{Where} is busy ({util} % utilization) but a setting ({reasons}) holds its SM clock at {clock} MHz, {clock_pct} of its {clock_max} MHz maximum, for {window}.</source>
        <translation>{Where} 正忙（利用率 {util} %），但一项设置（{reasons}）将其 SM 频率限制在 {clock} MHz，为最高 {clock_max} MHz 的 {clock_pct}，已持续 {window}。</translation>
    </message>
    <message>
        <source>Applications clocks or a sync boost group are set by whoever administers the machine: reset them (&apos;sudo nvidia-smi -rac&apos;) if you may, or ask the provider.</source>
        <translation>应用时钟或同步加速组由机器的管理者设置：如有权限可将其重置（&apos;sudo nvidia-smi -rac&apos;），否则请联系服务商。</translation>
    </message>
    <message>
        <source>Memory held by no visible process on {where}</source>
        <translation>{where} 有显存未被任何可见进程占用</translation>
    </message>
    <message>
        <source>{hidden} of the memory of {where} is in use ({used} used) but the processes you can see hold only {held}, for {window}: {hidden_pct} of the card is taken by something invisible.</source>
        <translation>{where} 的显存中有 {hidden} 处于使用中（共用 {used}），但您能看到的进程只占 {held}，已持续 {window}：整卡的 {hidden_pct} 被看不见的东西占用。</translation>
    </message>
    <message>
        <source>Another tenant&apos;s job, a reservation of the virtualization layer or a context leaked by a killed process: your job may run out of memory sooner than the card&apos;s size says. Check for leftover processes (a reset frees a leaked context) and ask the provider.</source>
        <translation>可能是其他租户的任务、虚拟化层的预留，或被杀进程泄漏的上下文：您的任务可能比显卡标称容量更早出现显存不足。检查是否有残留进程（重置 GPU 可释放泄漏的上下文），并联系服务商。</translation>
    </message>
    <message>
        <source>Watchdog on {host} will act at {deadline}</source>
        <translation>{host} 上的看门狗将于 {deadline} 执行操作</translation>
    </message>
    <message>
        <source>{host} has been idle while billed, and the watchdog on the instance will {act} at {deadline}{dry}.</source>
        <translation>{host} 一直空闲但仍在计费，实例上的看门狗将于 {deadline} {act}{dry}。</translation>
    </message>
    <message>
        <source>If the job is meant to wait, cancel it (Hosts ▸ Watchdog on the selected host…, or gpufleet watchdog {host} cancel); it stands down by itself once the GPUs work again.</source>
        <translation>如果作业本就需要等待，请取消（主机 ▸ 所选主机上的看门狗…，或 gpufleet watchdog {host} cancel）；GPU 重新工作后它会自行撤销。</translation>
    </message>
    <message>
        <source>Sampler restarted on {host}</source>
        <translation>{host} 上的采样器已重启</translation>
    </message>
    <message>
        <source>gpufleet&apos;s sampler on {host} started over after {gap} without samples: the host rebooted, or the sampler was stopped or killed there. The samples of that gap are missing; recording goes on.</source>
        <translation>{host} 上 gpufleet 的采样器在 {gap} 没有样本之后重新开始了：主机重启过，或采样器在那里被停止或被杀掉。这段空档的样本缺失；记录仍在继续。</translation>
    </message>
    <message>
        <source>If you did not reboot the host or stop the sampler, run uptime on the host: a reboot you did not ask for came from the provider or a crash; no reboot means the sampler was killed (look for it in dmesg, e.g. out of memory).</source>
        <translation>如果你没有重启主机或停止采样器，请在主机上运行 uptime：不是你要求的重启来自服务商或一次崩溃；没有重启则说明采样器被杀掉了（在 dmesg 中查找，例如内存不足）。</translation>
    </message>
    <message>
        <source>Power capped below default on {where}</source>
        <translation>{where} 功耗墙低于默认值</translation>
    </message>
    <message>
        <source>{Where} is limited to {limit} W against its default of {default} W ({limit_pct} of it), drawing {power} W now. The job runs slower than the same card elsewhere.</source>
        <translation>{Where} 的功耗上限被限制为 {limit} W，默认应为 {default} W（只有 {limit_pct}），当前功耗 {power} W。任务会比同型号的卡在别处跑得慢。</translation>
    </message>
    <message>
        <source>Up to {lost_pct} slower at {price}/h: up to {waste} an hour paid for nothing.</source>
        <translation>在 {price}/小时 的价格下最多慢 {lost_pct}：每小时最多白花 {waste}。</translation>
    </message>
    <message>
        <source>Save the evidence (nvidia-smi -q -d POWER shows the same limit) and ask the provider for the full power limit or another instance.</source>
        <translation>保存证据（nvidia-smi -q -d POWER 会显示同样的上限），要求服务商恢复完整功耗上限或更换实例。</translation>
    </message>
    <message>
        <source>Power limit reached on {where} (note)</source>
        <translation>{where} 达到功耗上限（提示）</translation>
    </message>
    <message>
        <source>{Where} is pulling its full {limit} W limit (default {default} W) and holds its SM clock at {clock} MHz, {clock_pct} of the {clock_max} MHz maximum, to stay within it.</source>
        <translation>{Where} 正以满额 {limit} W 的功耗运行（默认 {default} W），为了不超过上限，SM 频率保持在 {clock} MHz，为最高 {clock_max} MHz 的 {clock_pct}。</translation>
    </message>
    <message>
        <source>This is the card working as designed at its default limit: nothing to do.</source>
        <translation>这是显卡在默认功耗上限下的正常工作状态：无需处理。</translation>
    </message>
    <message>
        <source>Clocks below nominal on {where} with no reason</source>
        <translation>{where} 频率低于标称值且无原因</translation>
    </message>
    <message>
        <source>{Where} is busy ({util} % utilization) but its SM clock is {clock} MHz, {clock_pct} of its {clock_max} MHz maximum, for {window}, and the driver reports no reason.</source>
        <translation>{Where} 正在工作（利用率 {util} %），但 SM 频率只有 {clock} MHz，为最高 {clock_max} MHz 的 {clock_pct}，已持续 {window}，驱动没有报告任何原因。</translation>
    </message>
    <message>
        <source>A limit set outside this machine (the virtualization host or the provider) is the usual cause. Compare with another instance and ask the provider, with this evidence.</source>
        <translation>通常是本机之外设置的限制（虚拟化宿主机或服务商）。和另一个实例对比，并带着这份证据询问服务商。</translation>
    </message>
    <message>
        <source>{Where} close to its slowdown temperature</source>
        <translation>{Where} 接近降频温度</translation>
    </message>
    <message>
        <source>{Where} is at {temp} °C, within {margin} °C of its slowdown temperature ({limit} °C), for {window}.</source>
        <translation>{Where} 温度 {temp} °C，距降频温度（{limit} °C）不到 {margin} °C，已持续 {window}。</translation>
    </message>
    <message>
        <source>It will start slowing down soon. If the room or its airflow is the cause, ask the provider; a cooler instance is worth more than a cheaper one.</source>
        <translation>它很快就会开始降频。如果是机房或风道的问题，请联系服务商；散热好的实例比便宜的实例更值。</translation>
    </message>
    <message>
        <source>Memory of {where} close to its maximum temperature</source>
        <translation>{where} 显存接近最高温度</translation>
    </message>
    <message>
        <source>The memory of {where} is at {temp} °C, within {margin} °C of its limit ({limit} °C), for {window}.</source>
        <translation>{where} 的显存温度 {temp} °C，距上限（{limit} °C）不到 {margin} °C，已持续 {window}。</translation>
    </message>
    <message>
        <source>Hot memory throttles and then fails. Watch for ECC errors and ask the provider to check the cooling.</source>
        <translation>显存过热会先降频、再出错。留意 ECC 错误，并请服务商检查散热。</translation>
    </message>
    <message>
        <source>Memory of {where} over {above} °C</source>
        <translation>{where} 显存温度超过 {above} °C</translation>
    </message>
    <message>
        <source>The memory of {where} has been at {temp} °C (over {above} °C) for {window}.</source>
        <translation>{where} 的显存温度为 {temp} °C（超过 {above} °C），已持续 {window}。</translation>
    </message>
    <message>
        <source>Memory this hot risks errors and damage: save a checkpoint, stop training, and move to another instance.</source>
        <translation>显存这么热有出错和损坏的风险：保存检查点，停止训练，换到另一个实例。</translation>
    </message>
    <message>
        <source>{host} idle while billed</source>
        <translation>{host} 空闲但仍在计费</translation>
    </message>
    <message>
        <source>All {gpus} GPUs of {host} have been idle for {window} (utilization under {util_max} %, memory under {mem_max} of capacity). The job has probably crashed or finished.</source>
        <translation>{host} 的全部 {gpus} 张 GPU 已空闲 {window}（利用率低于 {util_max} %，显存占用低于 {mem_max}）。任务可能已崩溃或已结束。</translation>
    </message>
    <message>
        <source>That has cost {spent} so far, and costs {price} every hour it stays so.</source>
        <translation>到目前为止已花费 {spent}，保持这样每小时还要花 {price}。</translation>
    </message>
    <message>
        <source>Check the job. If it is done or dead, stop the instance (or let an action of this rule do it).</source>
        <translation>检查任务。如果已经完成或已挂掉，就停掉实例（或让这条规则的动作自动停止）。</translation>
    </message>
    <message>
        <source>Unexpected process on {where}</source>
        <translation>{where} 上有未知进程</translation>
    </message>
    <message>
        <source>{procs} on {where} is not in this host&apos;s allow-list.</source>
        <translation>{where} 上的 {procs} 不在该主机的允许列表中。</translation>
    </message>
    <message>
        <source>If you do not recognise it, kill it and change the instance&apos;s password and keys; if it is yours, add it to the host&apos;s allowed processes.</source>
        <translation>如果你不认识它，请结束它并更换实例的密码和密钥；如果是你自己的，把它加入该主机的允许进程列表。</translation>
    </message>
    <message>
        <source>Mining program on {where}</source>
        <translation>{where} 上有挖矿程序</translation>
    </message>
    <message>
        <source>{procs} on {where} looks like a cryptocurrency miner.</source>
        <translation>{where} 上的 {procs} 看起来是加密货币挖矿程序。</translation>
    </message>
    <message>
        <source>It takes compute you pay {price}/h for.</source>
        <translation>它占用了你按 {price}/小时 付费的算力。</translation>
    </message>
    <message>
        <source>Kill it now, change the instance&apos;s password and SSH keys, and tell the provider.</source>
        <translation>立即结束它，更换实例的密码和 SSH 密钥，并通知服务商。</translation>
    </message>
    <message>
        <source>{Where} in P{pstate} while a process runs</source>
        <translation>{Where} 有进程运行却处于 P{pstate}</translation>
    </message>
    <message>
        <source>{Where} has sat in its low-power state P{pstate} for {window} while {procs} runs on it.</source>
        <translation>{Where} 上运行着 {procs}，却已在低功耗状态 P{pstate} 停留 {window}。</translation>
    </message>
    <message>
        <source>Every hour like this costs {price} for almost no work.</source>
        <translation>这样每小时花费 {price}，几乎没干活。</translation>
    </message>
    <message>
        <source>The job is probably stuck, or the driver is. Check the job; if it persists, reset the GPU or change instance.</source>
        <translation>任务或驱动可能卡住了。检查任务；如果一直这样，重置 GPU 或更换实例。</translation>
    </message>
    <message>
        <source>Uncorrectable memory error on {where}</source>
        <translation>{where} 出现不可纠正的显存错误</translation>
    </message>
    <message>
        <source>The uncorrectable (double-bit) ECC error count of {where} rose from {before} to {after}.</source>
        <translation>{where} 的不可纠正（双比特）ECC 错误计数从 {before} 增加到 {after}。</translation>
    </message>
    <message>
        <source>If the job died, every hour until it restarts costs {price}.</source>
        <translation>如果任务已经挂掉，在重新启动之前每小时都要花 {price}。</translation>
    </message>
    <message>
        <source>The job on this GPU may have crashed or computed garbage: restart it from the last checkpoint, save this evidence and ask the provider to check the GPU.</source>
        <translation>这张 GPU 上的任务可能已崩溃或算出了错误结果：从最近的检查点重新启动，保存这份证据，并请服务商检查这张 GPU。</translation>
    </message>
    <message>
        <source>Row remapping pending on {where}</source>
        <translation>{where} 有待生效的行重映射</translation>
    </message>
    <message>
        <source>{Where} has a memory row remapping pending: it takes effect only after a GPU reset.</source>
        <translation>{Where} 有一个待生效的显存行重映射：只有重置 GPU 后才会生效。</translation>
    </message>
    <message>
        <source>Until the reset the bad row may fail again. Reset the GPU or reboot when your job allows, or ask the provider to.</source>
        <translation>重置之前坏行可能再次出错。在任务允许时重置 GPU 或重启，或请服务商处理。</translation>
    </message>
    <message>
        <source>Row remapping failed on {where}</source>
        <translation>{where} 行重映射失败</translation>
    </message>
    <message>
        <source>{Where} could not remap a failing memory row.</source>
        <translation>{Where} 无法重映射一个出错的显存行。</translation>
    </message>
    <message>
        <source>This GPU should be replaced: move to another instance and report it to the provider.</source>
        <translation>这张 GPU 应当更换：换到另一个实例，并报告给服务商。</translation>
    </message>
    <message>
        <source>Page retirement pending on {where}</source>
        <translation>{where} 有待退役的显存页</translation>
    </message>
    <message>
        <source>{Where} has memory pages waiting to be retired at the next reset.</source>
        <translation>{Where} 有显存页等待在下次重置时退役。</translation>
    </message>
    <message>
        <source>Reset the GPU or reboot when convenient, or ask the provider to.</source>
        <translation>方便时重置 GPU 或重启，或请服务商处理。</translation>
    </message>
    <message>
        <source>Xid {xid} on {where}: {xid_name}</source>
        <translation>{where} 出现 Xid {xid}：{xid_name}</translation>
    </message>
    <message>
        <source>The driver reported Xid {xid} ({xid_name}) on {where} (seen {count}×).</source>
        <translation>驱动在 {where} 上报告了 Xid {xid}（{xid_name}，共 {count} 次）。</translation>
    </message>
    <message>
        <source>{Where} lost</source>
        <translation>{Where} 掉卡</translation>
    </message>
    <message>
        <source>{Where} no longer answers the driver (it has fallen off the bus).</source>
        <translation>{Where} 不再响应驱动（已从总线上掉线，即掉卡）。</translation>
    </message>
    <message>
        <source>The instance still costs {price}/h with this GPU dead.</source>
        <translation>这张 GPU 已经挂了，实例却仍按 {price}/小时 计费。</translation>
    </message>
    <message>
        <source>It needs at least a reboot. Save this evidence, report it to the provider and move your job to another instance.</source>
        <translation>至少需要重启。保存这份证据，报告给服务商，并把任务迁移到另一个实例。</translation>
    </message>
    <message>
        <source>PCIe link of {where} below its maximum</source>
        <translation>{where} 的 PCIe 链路低于最高规格</translation>
    </message>
    <message>
        <source>While busy, {where}&apos;s PCIe link runs at Gen{gen} x{width} instead of Gen{max_gen} x{max_width}, for {window}: transfers to and from the GPU are slower.</source>
        <translation>工作时 {where} 的 PCIe 链路以 Gen{gen} x{width} 运行，而不是 Gen{max_gen} x{max_width}，已持续 {window}：与 GPU 之间的数据传输变慢。</translation>
    </message>
    <message>
        <source>Jobs that load a lot of data suffer most. Ask the provider to reseat the card or move you; save this evidence.</source>
        <translation>数据加载量大的任务受影响最大。请服务商重新插拔显卡或给你换机器；保存这份证据。</translation>
    </message>
    <message>
        <source>PCIe replays rising on {where}</source>
        <translation>{where} 的 PCIe 重放在增加</translation>
    </message>
    <message>
        <source>The PCIe link of {where} (Gen{gen} x{width}) retransmitted {replays} times within {replay_window}.</source>
        <translation>{where} 的 PCIe 链路（Gen{gen} x{width}）在 {replay_window} 内重传了 {replays} 次。</translation>
    </message>
    <message>
        <source>Replays are the link correcting its own errors: each one stalls transfers, and a rising count is a bad riser, slot or signal. Save the evidence and ask the provider to reseat the card or move you.</source>
        <translation>重放是链路在纠正自身的错误：每次都会让传输停顿，计数不断上升说明转接卡、插槽或信号有问题。保存证据，请服务商重新插拔显卡或为您更换机器。</translation>
    </message>
    <message>
        <source>NVLink link down on {where}</source>
        <translation>{where} 有 NVLink 链路断开</translation>
    </message>
    <message>
        <source>Only {up} of {links} NVLink links of {where} are up, for {window}.</source>
        <translation>{where} 的 {links} 条 NVLink 链路中只有 {up} 条正常，已持续 {window}。</translation>
    </message>
    <message>
        <source>Multi-GPU communication falls back to slower paths. Save this evidence and report it to the provider.</source>
        <translation>多卡通信会退回到更慢的路径。保存这份证据并报告给服务商。</translation>
    </message>
    <message>
        <source>NVLink degraded on {where}</source>
        <translation>{where} 的 NVLink 性能下降</translation>
    </message>
    <message>
        <source>NVLink of {where} carries less than the job asks of it, for {window}.</source>
        <translation>{where} 的 NVLink 传输量低于任务所需，已持续 {window}。</translation>
    </message>
    <message>
        <source>Save the evidence and report it to the provider.</source>
        <translation>保存证据并报告服务商。</translation>
    </message>
    <message>
        <source>{host} unreachable</source>
        <translation>{host} 无法连接</translation>
    </message>
    <message>
        <source>{host} has been unreachable for {window} ({status}: {reason}).</source>
        <translation>{host} 已无法连接 {window}（{status}：{reason}）。</translation>
    </message>
    <message>
        <source>Billing goes on meanwhile: {price}/h.</source>
        <translation>在此期间计费照常进行：{price}/小时。</translation>
    </message>
    <message>
        <source>The sampler keeps recording on the host, and the data is filled in when the link returns. Check your network, the instance&apos;s state and its SSH access.</source>
        <translation>采样器会在主机上继续记录，连接恢复后会补齐数据。请检查你的网络、实例状态和 SSH 访问。</translation>
    </message>
    <message>
        <source>Sampler stalled on {host}</source>
        <translation>{host} 上的采样器停滞</translation>
    </message>
    <message>
        <source>{host} sent no sample for {gap} although the connection was up.</source>
        <translation>连接正常，但 {host} 已 {gap} 没有发送采样数据。</translation>
    </message>
    <message>
        <source>The host may be overloaded or the driver hung (nvidia-smi hanging is a sign). Log in and check; a reboot may be needed.</source>
        <translation>主机可能负载过高或驱动挂起（nvidia-smi 卡住就是征兆）。登录检查；可能需要重启。</translation>
    </message>
    <message>
        <source>{host} has used {budget_pct} of its budget</source>
        <translation>{host} 已用掉预算的 {budget_pct}</translation>
    </message>
    <message>
        <source>{host} has cost {used} of its {budget} budget ({budget_pct}).</source>
        <translation>{host} 已花费 {used}，预算为 {budget}（{budget_pct}）。</translation>
    </message>
    <message>
        <source>It costs {price} every further hour.</source>
        <translation>之后每小时还要花 {price}。</translation>
    </message>
    <message>
        <source>Stop the instance if the work is done, or raise the budget.</source>
        <translation>如果工作已完成就停掉实例，否则提高预算。</translation>
    </message>
    <message>
        <source>{metric} high on {where}</source>
        <translation>{where} 的 {metric} 偏高</translation>
    </message>
    <message>
        <source>{metric} of {where} is {value}, above {threshold}, for {window}.</source>
        <translation>{where} 的 {metric} 为 {value}，高于 {threshold}，已持续 {window}。</translation>
    </message>
    <message>
        <source>{metric} low on {where}</source>
        <translation>{where} 的 {metric} 偏低</translation>
    </message>
    <message>
        <source>{metric} of {where} is {value}, below {threshold}, for {window}.</source>
        <translation>{where} 的 {metric} 为 {value}，低于 {threshold}，已持续 {window}。</translation>
    </message>
    <message>
        <source>Memory nearly full on {where}</source>
        <translation>{where} 显存将满</translation>
    </message>
    <message>
        <source>{Where} has {mem_used} of its {mem_total} in use ({mem_pct}) for {window}.{card_note}</source>
        <translation>{Where} 已用 {mem_used}（共 {mem_total}，{mem_pct}），持续 {window}。{card_note}</translation>
    </message>
    <message>
        <source>The next allocation on it fails with &quot;CUDA out of memory&quot;: lower the batch size, or move the job to a larger slice.</source>
        <translation>再分配显存就会报 “CUDA out of memory”：请减小 batch size，或把任务移到更大的切片上。</translation>
    </message>
    <message>
        <source>HW power brake on {where}</source>
        <translation>{where} 硬件功率制动</translation>
    </message>
    <message>
        <source>{Where} has been held down by its hardware power brake ({reasons}) for {window}: its SM clock is {clock} MHz, {clock_pct} of its {clock_max} MHz maximum, at {power} W. The brake is asserted by the machine&apos;s power supply, not by the GPU&apos;s own limit: the power delivery of this machine is failing or overloaded.</source>
        <translation>{Where} 被硬件功率制动（{reasons}）压低已有 {window}：SM 频率 {clock} MHz，为最高 {clock_max} MHz 的 {clock_pct}，功率 {power} W。制动由机器的电源发出，而不是 GPU 自身的功率上限：这台机器的供电出现故障或过载。</translation>
    </message>
    <message>
        <source>A fault of the machine, not of your job: save this evidence and ask the provider to check its power supply, or to move you to another machine.</source>
        <translation>这是机器的故障，不是您任务的问题：保存这些证据，请服务商检查其供电，或为您更换机器。</translation>
    </message>
    <message>
        <source>{Where} is limited to {limit} W against its default of {default} W ({limit_pct} of it). It draws {power} W now, under the limit, and the power-cap reason is not set: the limit does not slow this job at the moment, but it will slow a heavier one.</source>
        <translation>{Where} 的功率上限为 {limit} W，默认值为 {default} W（默认的 {limit_pct}）。它当前功耗 {power} W，低于上限，且未出现功率封顶原因：此上限目前不会拖慢这个任务，但会拖慢更重的任务。</translation>
    </message>
    <message>
        <source>Nothing is lost yet. If your work will need the full power, ask the provider for the default limit (nvidia-smi -q -d POWER shows it).</source>
        <translation>目前尚无损失。如果您的任务需要全功率，请向服务商要求恢复默认上限（nvidia-smi -q -d POWER 可查看）。</translation>
    </message>
    <message>
        <source>{Where} at its slowdown temperature</source>
        <translation>{Where} 已达降频温度</translation>
    </message>
    <message>
        <source>{Where} is at {temp} °C, at or over its slowdown temperature ({limit} °C), for {window}.</source>
        <translation>{Where} 温度为 {temp} °C，已达到或超过其降频温度（{limit} °C），持续 {window}。</translation>
    </message>
    <message>
        <source>It slows itself down from here on. If the room or its airflow is the cause, ask the provider; a cooler instance is worth more than a cheaper one.</source>
        <translation>从此刻起它会自行降频。如果原因是机房或风道，请联系服务商；一台更凉的实例比一台更便宜的更值。</translation>
    </message>
    <message>
        <source>Memory of {where} at its temperature limit</source>
        <translation>{where} 的显存已达温度上限</translation>
    </message>
    <message>
        <source>The memory of {where} has been at {temp} °C, at or over its own limit of {mem_limit} °C, for {window}.</source>
        <translation>{where} 的显存温度为 {temp} °C，已达到或超过其自身上限 {mem_limit} °C，持续 {window}。</translation>
    </message>
    <message>
        <source>Memory this hot throttles, then risks errors and damage: save a checkpoint, stop training, and move to another instance.</source>
        <translation>显存这么热会先降频，然后有出错和损坏的风险：保存检查点，停止训练，并换到另一台实例。</translation>
    </message>
    <message>
        <source>NVLink of {where} slower than its peers</source>
        <translation>{where} 的 NVLink 比同机其他 GPU 慢</translation>
    </message>
    <message>
        <source>NVLink of {where} carried {bw} against {peers_bw} on the host&apos;s other {peers} NVLink GPUs ({peer_pct} of theirs), for {window}, in the same job.</source>
        <translation>在同一任务中，{where} 的 NVLink 传输 {bw}，而本机其他 {peers} 块 NVLink GPU 为 {peers_bw}（为它们的 {peer_pct}），已持续 {window}。</translation>
    </message>
    <message>
        <source>In one collective every GPU carries about the same: a GPU at half its peers&apos; rate has a degraded link. Save the evidence and report it to the provider.</source>
        <translation>在同一次集合通信中每块 GPU 的传输量大致相同：速率只有同伴一半的 GPU 链路已经劣化。保存证据并报告服务商。</translation>
    </message>
    <message>
        <source>Dead NVLink lane on {where}</source>
        <translation>{where} 有失效的 NVLink 链路</translation>
    </message>
    <message>
        <source>NVLink link(s) {lanes} of {where} are up but carry next to nothing while its other links carry {lane_bw} each, for {window}.</source>
        <translation>{where} 的 NVLink 链路 {lanes} 处于连接状态但几乎没有流量，而其他链路每条传输 {lane_bw}，已持续 {window}。</translation>
    </message>
    <message>
        <source>Traffic is spread over all links: one that carries nothing is dead or degraded. Save the evidence and report it to the provider.</source>
        <translation>流量会分布到所有链路上：没有流量的链路已失效或劣化。保存证据并报告服务商。</translation>
    </message>
    <message>
        <source>NVLink errors rising on {where}</source>
        <translation>{where} 的 NVLink 错误在增加</translation>
    </message>
    <message>
        <source>NVLink of {where} logged {errors} errors (CRC, replay, recovery) within {errors_window}.</source>
        <translation>{where} 的 NVLink 在 {errors_window} 内记录了 {errors} 个错误（CRC、重放、恢复）。</translation>
    </message>
    <message>
        <source>Each error costs a retransmission; a rising count is a failing link or cable. Save the evidence and report it to the provider.</source>
        <translation>每个错误都需要重传；计数不断上升说明链路或线缆正在失效。保存证据并报告服务商。</translation>
    </message>
    <message>
        <source>Watchdog acted on {host}</source>
        <translation>{host} 上的看门狗已执行操作</translation>
    </message>
    <message>
        <source>The watchdog on {host} {acted}{dry}: {outcome}.</source>
        <translation>{host} 上的看门狗已{acted}{dry}：{outcome}。</translation>
    </message>
    <message>
        <source>Check in the provider&apos;s console that billing stopped; start the instance again when you need it, and arm the watchdog again there.</source>
        <translation>请在服务商控制台确认计费已停止；需要时再启动实例，并在其上重新启用看门狗。</translation>
    </message>
    <message>
        <source>Watchdog on {host} cannot act any more</source>
        <translation>{host} 上的看门狗已无法执行操作</translation>
    </message>
    <message>
        <source>The watchdog on {host} is armed, but its action cannot run now: {outcome}.</source>
        <translation>{host} 上的看门狗已启用，但其操作现在无法执行：{outcome}。</translation>
    </message>
    <message>
        <source>If {host} goes idle it will stay billed. Fix the cause (a new key in the instance, a command that exists), or arm the watchdog with another action (Hosts ▸ Watchdog on the selected host…).</source>
        <translation>如果 {host} 空闲下来，它将继续计费。请排除原因（在实例中放入新的密钥、改用确实存在的命令），或换一种操作重新启用看门狗（主机 ▸ 所选主机上的看门狗…）。</translation>
    </message>
    <message>
        <source>Watchdog on {host} could not act</source>
        <translation>{host} 上的看门狗未能执行操作</translation>
    </message>
    <message>
        <source>The watchdog on {host} tried to {act} and failed: {outcome}.</source>
        <translation>{host} 上的看门狗尝试{act}，但失败了：{outcome}。</translation>
    </message>
    <message>
        <source>The instance is still billed: stop it from the provider&apos;s console, then check the watchdog&apos;s settings (Hosts ▸ Watchdog on the selected host…).</source>
        <translation>实例仍在计费：请在服务商控制台停止它，然后检查看门狗的设置（主机 ▸ 所选主机上的看门狗…）。</translation>
    </message>
    <message>
        <source>gpufleet&apos;s sampler on {host} started over after {gap} without samples, and what the previous run had sampled but not yet sent is gone: that time is missing from the history.</source>
        <translation>{host} 上 gpufleet 的采样器在 {gap} 没有样本之后重新开始了，上一次运行已采样但尚未发送的数据已丢失：这段时间在历史记录中缺失。</translation>
    </message>
    <message>
        <source>Over {window} the clocks were held down {held_share} of the time ({held_by}).</source>
        <translation>在 {window} 内，频率被压低的时间占 {held_share}（{held_by}）。</translation>
    </message>
    <message>
        <source>A hardware or driver fault: save this evidence, restart your job from its checkpoint on another GPU or instance, and report it to the provider.</source>
        <translation>硬件或驱动故障：保存这份证据，在另一张 GPU 或另一个实例上从检查点重启任务，并报告给服务商。</translation>
    </message>
    <message>
        <source>Usually a fault of the application (a bad memory access, a killed job): check the job&apos;s log first. If it repeats with code that ran fine elsewhere, report it.</source>
        <translation>通常是应用程序的问题（非法内存访问、任务被结束）：先看任务日志。如果在别处正常运行的代码在这里反复出现此错误，请报告给服务商。</translation>
    </message>
    <message>
        <source>Set this host&apos;s price per hour to see what it costs.</source>
        <translation>设置该主机的每小时价格即可看到花费。</translation>
    </message>
    <message>
        <source>Resolved after {duration}.</source>
        <translation>{duration} 后已恢复。</translation>
    </message>
    <message>
        <source> The card as a whole is at {card_pct}.</source>
        <translation>整张卡的显存占用为 {card_pct}。</translation>
    </message>
    <message>
        <source> (a dry run: nothing is done)</source>
        <translation>（演练：不会执行任何操作）</translation>
    </message>
    <message>
        <source>stop the instance through its provider</source>
        <translation>通过服务商停止实例</translation>
    </message>
    <message>
        <source>power the instance off</source>
        <translation>关闭实例电源</translation>
    </message>
    <message>
        <source>run your command</source>
        <translation>运行你的命令</translation>
    </message>
    <message>
        <source>act</source>
        <translation>执行操作</translation>
    </message>
    <message>
        <source>stopped the instance through its provider</source>
        <translation>通过服务商停止了实例</translation>
    </message>
    <message>
        <source>powered the instance off</source>
        <translation>关闭了实例电源</translation>
    </message>
    <message>
        <source>ran your command</source>
        <translation>运行了你的命令</translation>
    </message>
    <message>
        <source>acted</source>
        <translation>执行了操作</translation>
    </message>
    <message>
        <source>info</source>
        <translation>提示</translation>
    </message>
    <message>
        <source>warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>critical</source>
        <translation>严重</translation>
    </message>
    <message>
        <source>{host}: the provider did not {action} the instance</source>
        <translation>{host}：服务商未执行实例的 {action} 操作</translation>
    </message>
    <message>
        <source>gpufleet asked the provider to {action} the instance of {host}, and it did not happen: {error}. The instance is still billed. Stop it in the provider&apos;s console now, then check the rule&apos;s provider action.</source>
        <translation>gpufleet 已请求服务商对 {host} 的实例执行 {action}，但没有成功：{error}。实例仍在计费。请立即在服务商控制台停止它，然后检查该规则的服务商操作。</translation>
    </message>
    <message>
        <source>The provider&apos;s API changed under gpufleet: until gpufleet is updated, its provider actions and billing sync cannot work for this provider.</source>
        <translation>服务商的 API 已变更，当前 gpufleet 无法适配：在更新 gpufleet 之前，该服务商的服务商操作和计费同步都无法使用。</translation>
    </message>
    <message>
        <source>Look at the job&apos;s log and its last step. If it is stuck, kill it (from the process list) and restart from its checkpoint; if you are done, stop the instance.</source>
        <translation>查看任务的日志和它最后一步。如果卡住了，就结束它（在进程列表中）并从检查点重新启动；如果已经用完，就停掉实例。</translation>
    </message>
    <message>
        <source>{Where} does no work but its memory is held</source>
        <translation>{Where} 没有在工作，但显存被占着</translation>
    </message>
    <message>
        <source>{Where} has done no work for {idle} (utilization {util} %, P{pstate}, {clock} MHz, {power} W) while {procs} holds {mem_used} of {mem_total} ({mem_pct}).</source>
        <translation>{Where} 已有 {idle} 没有工作（利用率 {util} %，P{pstate}，{clock} MHz，{power} W），而 {procs} 占着 {mem_used} 显存（共 {mem_total}，{mem_pct}）。</translation>
    </message>
    <message>
        <source>That time has cost {spent} so far at {price}/h.</source>
        <translation>按 {price}/小时计，这段时间至今已花费 {spent}。</translation>
    </message>
    <message>
        <source>Memory of {where} will be full in {eta}</source>
        <translation>{where} 的显存将在 {eta} 后占满</translation>
    </message>
    <message>
        <source>Memory used on {where} has risen steadily by {growth}/h over {fit_span} and is at {mem_used} of {mem_usable}: at this rate it is full at {full_at} (in {eta}), and the job then dies out of memory.</source>
        <translation>{where} 的显存占用在 {fit_span} 内以每小时 {growth} 的速度持续上升，现为 {mem_used}（可用 {mem_usable}）：照此速度将在 {full_at}（{eta} 后）占满，届时任务会因显存不足而崩溃。</translation>
    </message>
    <message>
        <source>A leak: tensors kept across steps (a loss summed without .item(), a growing cache or list). Save a checkpoint now, then find what grows.</source>
        <translation>这是泄漏：有张量跨步保留了下来（累加 loss 时没有用 .item()、缓存或列表不断增长）。请立即保存检查点，然后找出在增长的东西。</translation>
    </message>
    <message>
        <source>A process on {where} that is not your job&apos;s</source>
        <translation>{where} 上有一个不属于你任务的进程</translation>
    </message>
    <message>
        <source>{procs} on {where} appeared {late} after your job started, from another user or outside your container.</source>
        <translation>{where} 上的 {procs} 在你的任务启动 {late} 后出现，来自其他用户或你的容器之外。</translation>
    </message>
    <message>
        <source>If you did not start it, it shares the GPU you pay for: report it to the provider. If it is yours, mark it as yours from this alert.</source>
        <translation>如果不是你启动的，它就在分用你付费的 GPU：请报告服务商。如果是你自己的，请在这条告警上把它标记为你的进程。</translation>
    </message>
    <message>
        <source>A notebook kernel holds {where} and does nothing</source>
        <translation>一个 notebook 内核占着 {where} 却什么也不做</translation>
    </message>
    <message>
        <source>{Where} has done no work for {idle} while the notebook kernel {procs} holds {mem_used} of {mem_total} ({mem_pct}): a forgotten notebook.</source>
        <translation>{Where} 已有 {idle} 没有工作，而 notebook 内核 {procs} 占着 {mem_used} 显存（共 {mem_total}，{mem_pct}）：一个被遗忘的 notebook。</translation>
    </message>
    <message>
        <source>Shut the kernel down (or restart it) to free the GPU, and stop the instance if you are done.</source>
        <translation>关闭（或重启）该内核以释放 GPU；如果已经用完，就停掉实例。</translation>
    </message>
    <message>
        <source>Job on {where} looks hung: no work, memory held</source>
        <translation>{where} 上的任务似乎卡死了：没有工作，显存被占着</translation>
    </message>
    <message>
        <source>{Where} worked until {worked} and has done no work since, for {idle} (utilization {util} %, P{pstate}, {clock} MHz, {power} W), while {procs} still holds {mem_used} of {mem_total}: a job hung in a collective (NCCL) or waiting on a dead dataloader.</source>
        <translation>{Where} 一直工作到 {worked}，此后 {idle} 没有工作（利用率 {util} %，P{pstate}，{clock} MHz，{power} W），而 {procs} 仍占着 {mem_used} 显存（共 {mem_total}）：任务卡在了集合通信（NCCL）中，或在等待一个已挂掉的 dataloader。</translation>
    </message>
    <message>
        <source>A process disguised as a kernel thread on {where}</source>
        <translation>{where} 上有一个伪装成内核线程的进程</translation>
    </message>
    <message>
        <source>{procs} uses {where} under a kernel thread&apos;s name: kernel threads never hold GPU memory, so this process hides what it is.</source>
        <translation>{procs} 以内核线程的名字在使用 {where}：内核线程从不占用 GPU 显存，所以这个进程在隐藏自己的身份。</translation>
    </message>
    <message>
        <source>Treat the instance as compromised: save your work elsewhere, kill the process, and report it to the provider. If it really is yours, mark it as yours.</source>
        <translation>请把这个实例当作已被入侵：把你的工作保存到别处，结束该进程，并报告服务商。如果它确实是你自己的，请把它标记为你的进程。</translation>
    </message>
    <message>
        <source>Clocks of {where} low, and this instance hides why</source>
        <translation>{where} 频率偏低，而此实例不提供原因</translation>
    </message>
    <message>
        <source>{Where} is busy ({util} % utilization) but its SM clock is {clock} MHz, {clock_pct} of its {clock_max} MHz maximum, for {window}. This instance does not report clock event reasons (nor, often, temperature and power): why cannot be judged here.</source>
        <translation>{Where} 正忙（利用率 {util} %），但 SM 频率只有 {clock} MHz，为最高 {clock_max} MHz 的 {clock_pct}，已持续 {window}。此实例不报告降频原因（通常也不报告温度和功耗）：这里无法判断原因。</translation>
    </message>
    <message>
        <source>Ask the provider what limits the clock (a host-side cap is the usual cause), or compare with an instance that reports its sensors.</source>
        <translation>请询问服务商是什么限制了频率（通常是宿主机侧的上限），或与一个报告传感器数据的实例对比。</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; is marked as yours on {host}: it is no longer flagged there.</source>
        <translation>已在 {host} 上把“{name}”标记为你的进程：该主机上不会再标记它。</translation>
    </message>
</context>
<context>
    <name>App</name>
    <message>
        <source>No hosts are configured yet.</source>
        <translation>还没有配置任何主机。</translation>
    </message>
    <message>
        <source>The host configuration could not be read:
{reason}</source>
        <translation>无法读取主机配置：
{reason}</translation>
    </message>
    <message>
        <source>Open the demo fleet (six simulated rentals, with their own history) to look around? You can add your own hosts from the Hosts menu at any time.</source>
        <translation>要打开演示机群（六台模拟的租用实例，带有各自的历史数据）先看看吗？你随时可以从“主机”菜单添加自己的主机。</translation>
    </message>
    <message>
        <source>Open the demo fleet</source>
        <translation>打开演示机群</translation>
    </message>
    <message>
        <source>Add a host…</source>
        <translation>添加主机…</translation>
    </message>
</context>
<context>
    <name>Bench</name>
    <message>
        <source>as expected</source>
        <translation>符合预期</translation>
    </message>
    <message>
        <source>below par</source>
        <translation>低于正常水平</translation>
    </message>
    <message>
        <source>not measured</source>
        <translation>未测量</translation>
    </message>
    <message>
        <source>BF16 matmul (TFLOPS)</source>
        <translation>BF16 矩阵乘法 (TFLOPS)</translation>
    </message>
    <message>
        <source>FP16 matmul (TFLOPS)</source>
        <translation>FP16 矩阵乘法 (TFLOPS)</translation>
    </message>
    <message>
        <source>TF32 matmul (TFLOPS)</source>
        <translation>TF32 矩阵乘法 (TFLOPS)</translation>
    </message>
    <message>
        <source>Memory bandwidth (GB/s)</source>
        <translation>显存带宽 (GB/s)</translation>
    </message>
    <message>
        <source>Host to GPU copy (GB/s)</source>
        <translation>主机到 GPU 拷贝 (GB/s)</translation>
    </message>
    <message>
        <source>GPU to host copy (GB/s)</source>
        <translation>GPU 到主机拷贝 (GB/s)</translation>
    </message>
    <message>
        <source>GPU to GPU copy (GB/s)</source>
        <translation>GPU 间拷贝 (GB/s)</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>实测</translation>
    </message>
    <message>
        <source>Good card</source>
        <translation>正常卡</translation>
    </message>
    <message>
        <source>Datasheet</source>
        <translation>官方规格</translation>
    </message>
    <message>
        <source>Advertised</source>
        <translation>服务商标称</translation>
    </message>
    <message>
        <source>Benchmark started with {engine} on GPU {gpus} ({seconds} s).</source>
        <translation>基准测试已开始：使用 {engine}，GPU {gpus}（{seconds} 秒）。</translation>
    </message>
    <message>
        <source>GPU {gpu}: {metric} {value}</source>
        <translation>GPU {gpu}：{metric} {value}</translation>
    </message>
    <message>
        <source>GPU {gpu}: {metric} not measured: {reason}</source>
        <translation>GPU {gpu}：{metric} 未测量：{reason}</translation>
    </message>
    <message>
        <source>GPU {gpu} refused: {reason}</source>
        <translation>GPU {gpu} 不予测试：{reason}</translation>
    </message>
    <message>
        <source>{host}: {verdict} ({reason})</source>
        <translation>{host}：{verdict}（{reason}）</translation>
    </message>
    <message>
        <source>GPU {index} {name}: {verdict}: {reason}</source>
        <translation>GPU {index} {name}：{verdict}：{reason}</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Benchmark {when}: {verdict} ({reason})</source>
        <translation>基准测试（{when}）：{verdict}（{reason}）</translation>
    </message>
    <message>
        <source>Not benchmarked yet: Hosts → Benchmark the selected host… measures what it delivers.</source>
        <translation>尚未做过基准测试：主机 → 对所选主机做基准测试… 可测出它的实际性能。</translation>
    </message>
    <message>
        <source>{n} min ago</source>
        <translation>{n} 分钟前</translation>
    </message>
    <message>
        <source>{n} h ago</source>
        <translation>{n} 小时前</translation>
    </message>
    <message>
        <source>{n} days ago</source>
        <translation>{n} 天前</translation>
    </message>
    <message>
        <source>Is this the card you paid for? &apos;gpufleet bench {host}&apos; measures what it delivers (about a minute; or check --bench).</source>
        <translation>这是你付费租用的那张卡吗？&apos;gpufleet bench {host}&apos; 可测出它的实际性能（约一分钟；也可用 check --bench）。</translation>
    </message>
</context>
<context>
    <name>BenchController</name>
    <message>
        <source>&amp;Benchmark the selected host…</source>
        <translation>对所选主机做基准测试(&amp;B)…</translation>
    </message>
    <message>
        <source>Is this the card you paid for? About a minute.</source>
        <translation>这是你付费租用的那张卡吗？约需一分钟。</translation>
    </message>
    <message>
        <source>Benchmark {host}: is it the card you paid for?</source>
        <translation>对 {host} 做基准测试：是你付费租用的那张卡吗？</translation>
    </message>
</context>
<context>
    <name>BenchDialog</name>
    <message>
        <source>Benchmark {host}</source>
        <translation>{host} 基准测试</translation>
    </message>
    <message>
        <source>Is this the card you paid for? About a minute of matmul, memory, PCIe and GPU-to-GPU copies on the instance, with what it already has (nothing is installed). GPUs another process uses are skipped. Your job slows down while it runs.</source>
        <translation>这是你付费租用的那张卡吗？在实例上用约一分钟测试矩阵乘法、显存、PCIe 和 GPU 间拷贝，只用实例上已有的环境（不安装任何东西）。被其他进程占用的 GPU 会被跳过。测试期间你的任务会变慢。</translation>
    </message>
    <message>
        <source>%v of %m steps</source>
        <translation>%v / %m 步</translation>
    </message>
    <message>
        <source>GPU / measurement</source>
        <translation>GPU / 测试项</translation>
    </message>
    <message>
        <source>% of good card</source>
        <translation>占正常卡的 %</translation>
    </message>
    <message>
        <source>This host before</source>
        <translation>此主机以往结果</translation>
    </message>
    <message>
        <source>Your other rentals</source>
        <translation>你的其他租用实例</translation>
    </message>
    <message>
        <source>Run benchmark</source>
        <translation>运行基准测试</translation>
    </message>
    <message>
        <source>Cancel benchmark</source>
        <translation>取消基准测试</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Starting the benchmark on {host}…</source>
        <translation>正在 {host} 上启动基准测试…</translation>
    </message>
    <message>
        <source>Cancelling: the instance ends the benchmark at its next step…</source>
        <translation>正在取消：实例会在下一步结束基准测试…</translation>
    </message>
    <message>
        <source>Done. The result is kept in the history with the host.</source>
        <translation>完成。结果已随该主机保存在历史记录中。</translation>
    </message>
    <message>
        <source>Cancelled: the instance ended the benchmark&apos;s processes.</source>
        <translation>已取消：实例已结束基准测试的进程。</translation>
    </message>
    <message>
        <source>The benchmark did not run on {host}: {error}</source>
        <translation>基准测试未能在 {host} 上运行：{error}</translation>
    </message>
    <message>
        <source>GPU {index} {name}: {verdict}</source>
        <translation>GPU {index} {name}：{verdict}</translation>
    </message>
    <message>
        <source>GPU {index}: {reason}</source>
        <translation>GPU {index}：{reason}</translation>
    </message>
    <message>
        <source>…and {n} more GPUs: see each one&apos;s row.</source>
        <translation>…还有 {n} 块 GPU：请查看各自所在的行。</translation>
    </message>
    <message>
        <source>Advertised: the provider publishes no figures for this offer.</source>
        <translation>服务商标称：服务商没有公布这个配置的性能数据。</translation>
    </message>
</context>
<context>
    <name>BenchReasons</name>
    <message>
        <source>BF16 matmul (TFLOPS)</source>
        <translation>BF16 矩阵乘法 (TFLOPS)</translation>
    </message>
    <message>
        <source>FP16 matmul (TFLOPS)</source>
        <translation>FP16 矩阵乘法 (TFLOPS)</translation>
    </message>
    <message>
        <source>TF32 matmul (TFLOPS)</source>
        <translation>TF32 矩阵乘法 (TFLOPS)</translation>
    </message>
    <message>
        <source>memory bandwidth (GB/s)</source>
        <translation>显存带宽 (GB/s)</translation>
    </message>
    <message>
        <source>host-to-device copy (GB/s)</source>
        <translation>主机到 GPU 拷贝 (GB/s)</translation>
    </message>
    <message>
        <source>device-to-host copy (GB/s)</source>
        <translation>GPU 到主机拷贝 (GB/s)</translation>
    </message>
    <message>
        <source>peer copy (GB/s)</source>
        <translation>GPU 间拷贝 (GB/s)</translation>
    </message>
    <message>
        <source>SM clock {sm:.0f} MHz of {top:.0f} MHz max</source>
        <translation>SM 频率 {sm:.0f} MHz（最高 {top:.0f} MHz）</translation>
    </message>
    <message>
        <source>SM clock {sm:.0f} MHz</source>
        <translation>SM 频率 {sm:.0f} MHz</translation>
    </message>
    <message>
        <source>its clock was not read</source>
        <translation>未读到其频率</translation>
    </message>
    <message>
        <source>not run: {why}; --force runs it anyway</source>
        <translation>未运行：{why}；加 --force 可强制运行</translation>
    </message>
    <message>
        <source>not run: in use by another process; --force runs it anyway</source>
        <translation>未运行：正被其他进程使用；加 --force 可强制运行</translation>
    </message>
    <message>
        <source>the run ended early ({status}): {message}</source>
        <translation>测试提前结束（{status}）：{message}</translation>
    </message>
    <message>
        <source>the run ended early ({status})</source>
        <translation>测试提前结束（{status}）</translation>
    </message>
    <message>
        <source>{metric} not measured: {why}</source>
        <translation>{metric} 未测量：{why}</translation>
    </message>
    <message>
        <source>nothing was measured</source>
        <translation>什么也没有测到</translation>
    </message>
    <message>
        <source>no reference figures for {name}: the figures are shown, not judged</source>
        <translation>没有 {name} 的参考数据：只显示测得的数值，不作判断</translation>
    </message>
    <message>
        <source>{metric} at {pct:.0f} % of a good card ({measured:.1f} of {good:.1f})</source>
        <translation>{metric} 为正常卡的 {pct:.0f} %（实测 {measured:.1f}，正常卡 {good:.1f}）</translation>
    </message>
    <message>
        <source>every measured figure is within reach of a good card of this model</source>
        <translation>所有实测数值都接近该型号正常卡的水平</translation>
    </message>
    <message>
        <source>{metric} under the offer&apos;s advertised {advertised:g} ({measured:.1f})</source>
        <translation>{metric} 低于该配置标称的 {advertised:g}（实测 {measured:.1f}）</translation>
    </message>
    <message>
        <source>clock held down by heat ({clock}): check the cooling or ask the provider</source>
        <translation>频率因温度被压低（{clock}）：请检查散热或联系服务商</translation>
    </message>
    <message>
        <source>clock held down by heat at {temp:.0f} °C ({clock}): check the cooling or ask the provider</source>
        <translation>频率在 {temp:.0f} °C 时因温度被压低（{clock}）：请检查散热或联系服务商</translation>
    </message>
    <message>
        <source>clock held by a lowered power limit: {limit:.0f} W of its {default:.0f} W default ({clock}); ask the provider to restore it</source>
        <translation>频率被调低的功耗上限压制：{limit:.0f} W，默认 {default:.0f} W（{clock}）；请要求服务商恢复</translation>
    </message>
    <message>
        <source>clock held at the power limit ({clock})</source>
        <translation>频率被压在功耗上限（{clock}）</translation>
    </message>
    <message>
        <source>no power or heat limit held it ({clock}): a slower card or host than a good one</source>
        <translation>没有功耗或温度限制压制它（{clock}）：这张卡或这台主机本身比正常的慢</translation>
    </message>
    <message>
        <source>PCIe link trained at x{width:.0f} of x{wmax:.0f}: a riser, slot or bifurcation setting</source>
        <translation>PCIe 链路只协商到 x{width:.0f}（最高 x{wmax:.0f}）：转接卡、插槽或拆分（bifurcation）设置的问题</translation>
    </message>
    <message>
        <source>PCIe link at gen {gen:.0f} of {gmax:.0f}: the slot or its setting</source>
        <translation>PCIe 链路为 Gen {gen:.0f}（最高 Gen {gmax:.0f}）：插槽或其设置的问题</translation>
    </message>
    <message>
        <source>the PCIe link is at full width and generation: the host side (NUMA placement, a shared switch)</source>
        <translation>PCIe 链路的宽度和代数都已满速：问题在主机侧（NUMA 亲和、共享的 PCIe 交换芯片）</translation>
    </message>
    <message>
        <source>NVLink: {up:.0f} of {links:.0f} links up: a link is down, ask the provider</source>
        <translation>NVLink：{links:.0f} 条链路中只有 {up:.0f} 条正常：有链路断开，请联系服务商</translation>
    </message>
    <message>
        <source>no NVLink: peer copies cross PCIe</source>
        <translation>没有 NVLink：GPU 间拷贝走 PCIe</translation>
    </message>
    <message>
        <source>every NVLink link up: the route between these GPUs (topology)</source>
        <translation>所有 NVLink 链路正常：问题在这些 GPU 之间的路径（拓扑）</translation>
    </message>
    <message>
        <source>memory clock {mem:.0f} of {top:.0f} MHz</source>
        <translation>显存频率 {mem:.0f} MHz（最高 {top:.0f} MHz）</translation>
    </message>
    <message>
        <source>memory clock at its maximum: a slower memory stack than a good card&apos;s</source>
        <translation>显存频率已是最高：显存本身比正常卡的慢</translation>
    </message>
    <message>
        <source>GPU {gpus} below par</source>
        <translation>GPU {gpus} 低于正常水平</translation>
    </message>
    <message>
        <source>GPU {gpus} not measured</source>
        <translation>GPU {gpus} 未测量</translation>
    </message>
    <message>
        <source>no GPU measured</source>
        <translation>没有测量任何 GPU</translation>
    </message>
    <message>
        <source>every GPU as expected</source>
        <translation>所有 GPU 均符合预期</translation>
    </message>
</context>
<context>
    <name>ClocksTab</name>
    <message>
        <source>SM clock (MHz)</source>
        <translation>SM 频率 (MHz)</translation>
    </message>
    <message>
        <source>memory clock (MHz)</source>
        <translation>显存频率 (MHz)</translation>
    </message>
    <message>
        <source>Export evidence…</source>
        <translation>导出证据…</translation>
    </message>
    <message>
        <source>Save a zip of this host&apos;s data over the range shown: metrics, plots, alerts</source>
        <translation>把这台主机在当前时间范围内的数据存成 zip：指标、图表、告警</translation>
    </message>
    <message>
        <source>max {value}</source>
        <translation>最高 {value}</translation>
    </message>
    <message>
        <source>SM clock</source>
        <translation>SM 频率</translation>
    </message>
    <message>
        <source>memory clock</source>
        <translation>显存频率</translation>
    </message>
</context>
<context>
    <name>Compare</name>
    <message>
        <source>The power limit of {gpus} was lowered from {a_power_limit_w} W to {b_power_limit_w} W; held at it, the SM clock fell from {a_sm_clock_mhz} to {b_sm_clock_mhz} MHz. The provider set this limit: ask them to restore the default.</source>
        <translation>{gpus} 的功耗上限从 {a_power_limit_w} W 被调低到 {b_power_limit_w} W；被压在这个上限上，SM 频率从 {a_sm_clock_mhz} MHz 降到 {b_sm_clock_mhz} MHz。这个上限是服务商设置的：请要求服务商恢复默认值。</translation>
    </message>
    <message>
        <source>{gpus} reached the same {b_power_limit_w} W power limit more often ({a_held_power_pct} % of the work in A, {b_held_power_pct} % in B), so the SM clock fell from {a_sm_clock_mhz} to {b_sm_clock_mhz} MHz. Either the job draws more power now, or the card needs more for the same work (it runs at {b_temp_gpu_c} °C against {a_temp_gpu_c} °C).</source>
        <translation>{gpus} 更频繁地触及同样的 {b_power_limit_w} W 功耗上限（A 中占工作时间的 {a_held_power_pct} %，B 中为 {b_held_power_pct} %），因此 SM 频率从 {a_sm_clock_mhz} MHz 降到 {b_sm_clock_mhz} MHz。要么是任务现在功耗更高，要么是显卡做同样的工作需要更多功率（它现在 {b_temp_gpu_c} °C，A 中为 {a_temp_gpu_c} °C）。</translation>
    </message>
    <message>
        <source>{gpus} slowed down for heat {b_held_thermal_pct} % of the work (A: {a_held_thermal_pct} %) at {b_temp_gpu_c} °C on average (A: {a_temp_gpu_c} °C, peak {b_temp_max_c} °C); the SM clock fell from {a_sm_clock_mhz} to {b_sm_clock_mhz} MHz. The instance&apos;s cooling is worse: ask for a check or another machine.</source>
        <translation>{gpus} 在 {b_held_thermal_pct} % 的工作时间里因温度降频（A：{a_held_thermal_pct} %），平均温度 {b_temp_gpu_c} °C，峰值 {b_temp_max_c} °C（A：{a_temp_gpu_c} °C）；SM 频率从 {a_sm_clock_mhz} MHz 降到 {b_sm_clock_mhz} MHz。这个实例的散热变差了：请要求服务商检查，或换一台机器。</translation>
    </message>
    <message>
        <source>The board held {gpus} in HW slowdown {b_held_hw_slowdown_pct} % of the work (A: {a_held_hw_slowdown_pct} %); the SM clock fell from {a_sm_clock_mhz} to {b_sm_clock_mhz} MHz. This is the hardware or its power supply: report it.</source>
        <translation>板卡让 {gpus} 在 {b_held_hw_slowdown_pct} % 的工作时间里处于硬件降频（A：{a_held_hw_slowdown_pct} %）；SM 频率从 {a_sm_clock_mhz} MHz 降到 {b_sm_clock_mhz} MHz。这是硬件或其供电的问题：请报告服务商。</translation>
    </message>
    <message>
        <source>The SM clock of {gpus} was {b_sm_clock_mhz} MHz against {a_sm_clock_mhz} MHz in A (nominal {a_sm_clock_max_mhz} MHz) with no reason reported by the driver: clocks locked or capped on the host. Ask the provider why.</source>
        <translation>{gpus} 的 SM 频率为 {b_sm_clock_mhz} MHz，A 中为 {a_sm_clock_mhz} MHz（标称 {a_sm_clock_max_mhz} MHz），驱动没有报告任何原因：频率在宿主机上被锁定或限制了。请向服务商询问原因。</translation>
    </message>
    <message>
        <source>Another process ran on {gpus} ({others}): your job had {b_own_share_pct} % of the GPU against {a_own_share_pct} % in A, while utilization still read {b_util_gpu_pct} %. The GPU is shared: ask for a dedicated one.</source>
        <translation>{gpus} 上运行着另一个进程（{others}）：你的任务只占 GPU 的 {b_own_share_pct} %，A 中为 {a_own_share_pct} %，而利用率仍显示 {b_util_gpu_pct} %。这块 GPU 被共享了：请要求一块独占的 GPU。</translation>
    </message>
    <message>
        <source>{gpus} waited for input: the SMs were busy {b_sm_active_pct} % of the time against {a_sm_active_pct} % in A (utilization {b_util_gpu_pct} % against {a_util_gpu_pct} %), with {b_pcie_rx_bps} arriving over PCIe against {a_pcie_rx_bps}. The GPU is not at fault: look at the storage the data is read from, the network, and the number of dataloader workers. If the data is on the provider&apos;s network storage, it may be theirs to fix.</source>
        <translation>{gpus} 在等待输入：SM 忙碌的时间占 {b_sm_active_pct} %，A 中为 {a_sm_active_pct} %（利用率 {b_util_gpu_pct} %，A 中为 {a_util_gpu_pct} %），PCIe 传入 {b_pcie_rx_bps}，A 中为 {a_pcie_rx_bps}。不是 GPU 的问题：请检查读取数据的存储、网络以及 dataloader 的 worker 数量。如果数据在服务商的网络存储上，可能需要服务商来解决。</translation>
    </message>
    <message>
        <source>Only {b_nvlink_up} of {b_nvlink_links} NVLink links of {gpus} were up (A: {a_nvlink_up}); NVLink traffic fell from {a_nvlink_bps} to {b_nvlink_bps} and the SMs waited in the collectives. A degraded link is the host&apos;s: report it.</source>
        <translation>{gpus} 的 {b_nvlink_links} 条 NVLink 链路中只有 {b_nvlink_up} 条正常（A：{a_nvlink_up} 条）；NVLink 流量从 {a_nvlink_bps} 降到 {b_nvlink_bps}，SM 在集合通信中等待。链路劣化是宿主机的问题：请报告服务商。</translation>
    </message>
    <message>
        <source>The PCIe link of {gpus} ran at Gen {b_pcie_gen} x{b_pcie_width} against Gen {a_pcie_gen} x{a_pcie_width} in A; transfers took longer and the SMs waited. A downtrained link is the host&apos;s: report it.</source>
        <translation>{gpus} 的 PCIe 链路以 Gen {b_pcie_gen} x{b_pcie_width} 运行，A 中为 Gen {a_pcie_gen} x{a_pcie_width}；传输耗时更长，SM 在等待。链路降速是宿主机的问题：请报告服务商。</translation>
    </message>
    <message>
        <source>The memory of {gpus} was {b_mem_used_pct} % full at its peak (A: {a_mem_used_pct} %); the allocator&apos;s retries kept the SMs waiting. A larger batch or model in the job, or memory taken by another process: check both.</source>
        <translation>{gpus} 的显存占用峰值为 {b_mem_used_pct} %（A：{a_mem_used_pct} %）；显存分配器反复重试，让 SM 一直在等待。可能是任务的 batch 或模型变大了，也可能是其他进程占用了显存：两者都要检查。</translation>
    </message>
    <message>
        <source>The memory of {gpus} reported errors: {b_ecc_sbe_new} corrected and {b_ecc_dbe_new} uncorrected in B (A: {a_ecc_sbe_new} and {a_ecc_dbe_new}), a row remapping pending; the SMs stalled. Failing GPU memory: ask for another GPU.</source>
        <translation>{gpus} 的显存报告了错误：B 中 {b_ecc_sbe_new} 个已纠正、{b_ecc_dbe_new} 个不可纠正（A：{a_ecc_sbe_new} 和 {a_ecc_dbe_new}），有待生效的行重映射；SM 因此停顿。GPU 显存正在损坏：请要求换一块 GPU。</translation>
    </message>
    <message>
        <source>{gpus} waited for it at every step.</source>
        <translation>{gpus} 每一步都在等它。</translation>
    </message>
    <message>
        <source>The platform: B lost throughput to the card or the host, not to your job.</source>
        <translation>平台问题：B 的吞吐损失来自显卡或宿主机，而不是你的任务。</translation>
    </message>
    <message>
        <source>Your job: the hardware ran the same in A and B. Same clocks, power and temperatures, no other process on the GPUs. If B is slower, look at the code, the config and the data.</source>
        <translation>你的任务：A 和 B 中硬件表现相同。频率、功耗和温度都一样，GPU 上也没有其他进程。如果 B 更慢，请检查代码、配置和数据。</translation>
    </message>
    <message>
        <source>Unclear: {reason}</source>
        <translation>无法判断：{reason}</translation>
    </message>
    <message>
        <source>the GPUs waited for data; the cards ran as well as in A. Whether the input path is yours (dataloader, preprocessing) or the platform&apos;s (network storage, network) the data here cannot tell.</source>
        <translation>GPU 在等数据；显卡本身和 A 中运行得一样好。输入链路的问题在你这边（dataloader、预处理）还是在平台那边（网络存储、网络），这里的数据无法判断。</translation>
    </message>
    <message>
        <source>the GPUs were held at the same power limit more often; that can be the job (heavier kernels) or the card (needing more power for the same work).</source>
        <translation>GPU 更频繁地被压在同样的功耗上限上；原因可能在任务（更重的内核），也可能在显卡（同样的工作需要更多功率）。</translation>
    </message>
    <message>
        <source>the GPUs&apos; memory was nearly full; that is usually the job&apos;s own use.</source>
        <translation>GPU 显存几乎已满；这通常是任务自身的占用。</translation>
    </message>
    <message>
        <source>A and B have no GPU that worked at least 2 minutes in both: nothing to compare. Pick windows in which the job ran.</source>
        <translation>A 和 B 中没有任何一块 GPU 在两边都工作了至少 2 分钟：没有可对比的内容。请选择任务在运行的时间窗口。</translation>
    </message>
    <message>
        <source>A and B ran on different GPU models ({a_gpu} and {b_gpu}); their clocks and power cannot be set against each other.</source>
        <translation>A 和 B 运行在不同型号的 GPU 上（{a_gpu} 和 {b_gpu}）；它们的频率和功耗无法相互比较。</translation>
    </message>
    <message>
        <source>A&apos;s GPUs show no utilization in the window: no throughput to compare with.</source>
        <translation>A 的 GPU 在该时间窗口内没有利用率：没有可用来对比的吞吐量。</translation>
    </message>
    <message>
        <source>From the hardware data, B ran about {pct} % slower than A (between {lo} % and {hi} %: the pace of the slowest GPU, as synchronous training goes, down to the GPUs taken one by one).</source>
        <translation>从硬件数据看，B 比 A 慢约 {pct} %（介于 {lo} % 与 {hi} % 之间：从按最慢 GPU 的节奏计算（同步训练正是如此），到逐块 GPU 分别计算）。</translation>
    </message>
    <message>
        <source>From the hardware data, B ran at least as fast as A ({pct} %, between {lo} % and {hi} %).</source>
        <translation>从硬件数据看，B 至少和 A 一样快（{pct} %，介于 {lo} % 与 {hi} % 之间）。</translation>
    </message>
    <message>
        <source>The data cannot tell how much slower B ran.</source>
        <translation>数据无法判断 B 慢了多少。</translation>
    </message>
    <message>
        <source>Compared: {gpus}, {a_work} of work in A and {b_work} in B (pauses left out).</source>
        <translation>已对比：{gpus}，A 中工作 {a_work}，B 中工作 {b_work}（不含暂停）。</translation>
    </message>
    <message>
        <source>Not compared (no work in both): {gpus}.</source>
        <translation>未对比（并非两边都在工作）：{gpus}。</translation>
    </message>
    <message>
        <source>GPU {list}</source>
        <translation>GPU {list}</translation>
    </message>
    <message>
        <source>GPUs {list}</source>
        <translation>GPU {list}</translation>
    </message>
    <message>
        <source>PID {pid}, outside this container</source>
        <translation>PID {pid}（不在本容器中）</translation>
    </message>
    <message>
        <source>PID {pid} {name}</source>
        <translation>PID {pid} {name}</translation>
    </message>
    <message>
        <source>power limit lowered</source>
        <translation>功耗上限被调低</translation>
    </message>
    <message>
        <source>held at the power limit</source>
        <translation>被压在功耗上限</translation>
    </message>
    <message>
        <source>thermal slowdown</source>
        <translation>温控降频</translation>
    </message>
    <message>
        <source>HW slowdown</source>
        <translation>硬件降频</translation>
    </message>
    <message>
        <source>clocks low, no reason given</source>
        <translation>频率偏低且无原因</translation>
    </message>
    <message>
        <source>GPU shared with another process</source>
        <translation>GPU 与其他进程共享</translation>
    </message>
    <message>
        <source>waiting for data</source>
        <translation>等待数据</translation>
    </message>
    <message>
        <source>NVLink degraded</source>
        <translation>NVLink 劣化</translation>
    </message>
    <message>
        <source>PCIe link degraded</source>
        <translation>PCIe 链路降级</translation>
    </message>
    <message>
        <source>memory nearly full</source>
        <translation>显存几乎已满</translation>
    </message>
    <message>
        <source>memory errors (ECC)</source>
        <translation>显存错误（ECC）</translation>
    </message>
    <message>
        <source>platform</source>
        <translation>平台</translation>
    </message>
    <message>
        <source>your job</source>
        <translation>你的任务</translation>
    </message>
    <message>
        <source>unclear</source>
        <translation>无法判断</translation>
    </message>
    <message>
        <source>SM clock</source>
        <translation>SM 频率</translation>
    </message>
    <message>
        <source>power</source>
        <translation>功耗</translation>
    </message>
    <message>
        <source>power limit</source>
        <translation>功耗上限</translation>
    </message>
    <message>
        <source>GPU temperature</source>
        <translation>GPU 温度</translation>
    </message>
    <message>
        <source>utilization</source>
        <translation>利用率</translation>
    </message>
    <message>
        <source>SM activity</source>
        <translation>SM 活跃度</translation>
    </message>
    <message>
        <source>your share of the GPU</source>
        <translation>你的任务占 GPU 的份额</translation>
    </message>
    <message>
        <source>PCIe in</source>
        <translation>PCIe 传入</translation>
    </message>
    <message>
        <source>NVLink</source>
        <translation>NVLink</translation>
    </message>
</context>
<context>
    <name>CompareOpener</name>
    <message>
        <source>&amp;Compare…</source>
        <translation>对比(&amp;C)…</translation>
    </message>
    <message>
        <source>Slower than yesterday? Put two runs side by side</source>
        <translation>比昨天慢？把两次运行放在一起对比</translation>
    </message>
    <message>
        <source>Comparing {b} with {a}…</source>
        <translation>正在对比 {b} 与 {a}…</translation>
    </message>
    <message>
        <source>Cannot compare: {error}</source>
        <translation>无法对比：{error}</translation>
    </message>
</context>
<context>
    <name>ComparePicker</name>
    <message>
        <source>Compare two runs</source>
        <translation>对比两次运行</translation>
    </message>
    <message>
        <source>This hour vs the same hour yesterday</source>
        <translation>本小时 vs 昨天同一小时</translation>
    </message>
    <message>
        <source>This hour vs the hour before</source>
        <translation>本小时 vs 上一小时</translation>
    </message>
    <message>
        <source>A, the reference: host</source>
        <translation>A（参照）：主机</translation>
    </message>
    <message>
        <source>A starts at</source>
        <translation>A 开始时间</translation>
    </message>
    <message>
        <source>B, the run in question: host</source>
        <translation>B（待查的运行）：主机</translation>
    </message>
    <message>
        <source>B starts at</source>
        <translation>B 开始时间</translation>
    </message>
    <message>
        <source>Length of each window</source>
        <translation>每个时间窗口的长度</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>对比</translation>
    </message>
</context>
<context>
    <name>CompareView</name>
    <message>
        <source>SM clock</source>
        <translation>SM 频率</translation>
    </message>
    <message>
        <source>Power (dashed: limit)</source>
        <translation>功耗（虚线：上限）</translation>
    </message>
    <message>
        <source>GPU temperature</source>
        <translation>GPU 温度</translation>
    </message>
    <message>
        <source>Utilization (dashed: SM activity)</source>
        <translation>利用率（虚线：SM 活跃度）</translation>
    </message>
    <message>
        <source>Your share of the GPU</source>
        <translation>你的任务占 GPU 的份额</translation>
    </message>
    <message>
        <source>PCIe in (dashed: NVLink)</source>
        <translation>PCIe 传入（虚线：NVLink）</translation>
    </message>
    <message>
        <source>Compare: {b} against {a}</source>
        <translation>对比：{b} 相对于 {a}</translation>
    </message>
    <message>
        <source>minutes from the window&apos;s start</source>
        <translation>距窗口开始的分钟数</translation>
    </message>
    <message>
        <source>Means over the GPUs compared:</source>
        <translation>所对比 GPU 的平均值：</translation>
    </message>
    <message>
        <source>Save evidence…</source>
        <translation>保存证据…</translation>
    </message>
    <message>
        <source>A zip for the provider&apos;s support: both windows, causes, verdict</source>
        <translation>给服务商客服的 zip：两个时间窗口、原因、结论</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Save evidence</source>
        <translation>保存证据</translation>
    </message>
</context>
<context>
    <name>ComputeTab</name>
    <message>
        <source>SM active · util (%)</source>
        <translation>SM 活跃 · 利用率 (%)</translation>
    </message>
    <message>
        <source>tensor · occ. (%)</source>
        <translation>Tensor · 占用 (%)</translation>
    </message>
    <message>
        <source>DRAM (%)</source>
        <translation>DRAM (%)</translation>
    </message>
    <message>
        <source>FP32 · FP16 (%)</source>
        <translation>FP32 · FP16 (%)</translation>
    </message>
    <message>
        <source>bright: SM active, tensor, DRAM, FP32 · dark: GPU-Util, SM occupancy, FP16</source>
        <translation>亮：SM 活跃度、Tensor、DRAM、FP32 · 暗：GPU 利用率、SM 占用率、FP16</translation>
    </message>
    <message>
        <source>bright: power draw as a share of the limit · dark: GPU-Util</source>
        <translation>亮：功耗占上限的比例 · 暗：GPU 利用率</translation>
    </message>
    <message>
        <source>power · util (%)</source>
        <translation>功耗 · 利用率 (%)</translation>
    </message>
    <message>
        <source> util</source>
        <translation> 利用率</translation>
    </message>
    <message>
        <source> power</source>
        <translation> 功耗</translation>
    </message>
    <message>
        <source>GPU-Util</source>
        <translation>GPU 利用率</translation>
    </message>
    <message>
        <source>tensor activity</source>
        <translation>Tensor 活跃度</translation>
    </message>
    <message>
        <source>DRAM activity</source>
        <translation>DRAM 活跃度</translation>
    </message>
    <message>
        <source>FP32 pipe activity</source>
        <translation>FP32 流水线活跃度</translation>
    </message>
    <message>
        <source>this GPU</source>
        <translation>这块 GPU</translation>
    </message>
    <message>
        <source>GPU {list}</source>
        <translation>GPU {list}</translation>
    </message>
    <message>
        <source>SM activity, occupancy, tensor and DRAM activity: not available on {which}{because}. Power draw against the limit stands in: a GPU at work draws near its limit.</source>
        <translation>SM 活跃度、占用率、Tensor 与 DRAM 活跃度：{which}不提供{because}。改用功耗与上限之比代替：满负荷工作的 GPU 功耗接近上限。</translation>
    </message>
    <message>
        <source>GPU-Util counts the time any kernel ran, however few SMs it kept busy: 99 % utilization can be a quarter of the GPU working.</source>
        <translation>GPU 利用率只统计有内核在运行的时间，不管它占用了多少个 SM：99 % 的利用率可能只有四分之一的 GPU 在干活。</translation>
    </message>
    <message>
        <source>No GPU was busy (80 % utilization or more) in this range.</source>
        <translation>此时间范围内没有 GPU 处于繁忙状态（利用率 80 % 以上）。</translation>
    </message>
    <message>
        <source>While busy, the GPUs averaged {util} utilization, but {sm} SM active, {tensor} tensor and {dram} DRAM activity.</source>
        <translation>繁忙时 GPU 平均利用率为 {util}，但 SM 活跃度只有 {sm}，Tensor 活跃度 {tensor}，DRAM 活跃度 {dram}。</translation>
    </message>
    <message>
        <source>The FP32 pipes were busy {fp32}, the FP16 pipes {fp16}.</source>
        <translation>FP32 流水线繁忙 {fp32}，FP16 流水线繁忙 {fp16}。</translation>
    </message>
    <message>
        <source>{gpu}&apos;s SMs worked only {sm} of the time.</source>
        <translation>{gpu} 的 SM 只有 {sm} 的时间在工作。</translation>
    </message>
    <message>
        <source>Without GPM, while busy the GPUs averaged {util} utilization at {power} of their power limit.</source>
        <translation>没有 GPM 计数器：繁忙时 GPU 平均利用率为 {util}，功耗为上限的 {power}。</translation>
    </message>
    <message>
        <source>util {util} · power {share} of limit</source>
        <translation>利用率 {util} · 功耗为上限的 {share}</translation>
    </message>
    <message>
        <source>util {util} · SM {sm} · occ {occ} · tensor {tensor} · DRAM {dram}</source>
        <translation>利用率 {util} · SM {sm} · 占用 {occ} · Tensor {tensor} · DRAM {dram}</translation>
    </message>
</context>
<context>
    <name>ConfigWatch</name>
    <message>
        <source>config.toml not applied: {error}</source>
        <translation>config.toml 未生效：{error}</translation>
    </message>
    <message>
        <source>added {names}</source>
        <translation>新增 {names}</translation>
    </message>
    <message>
        <source>changed {names}</source>
        <translation>修改 {names}</translation>
    </message>
    <message>
        <source>removed {names}</source>
        <translation>移除 {names}</translation>
    </message>
    <message>
        <source>config.toml changed: {what}</source>
        <translation>config.toml 已更改：{what}</translation>
    </message>
</context>
<context>
    <name>Cost</name>
    <message>
        <source>{host}: {total} over {billed} at {price}/h: busy {busy} ({busy_time}), idle {idle} ({idle_time}), not observed {unknown} ({unknown_time}); effective compute {effective}.</source>
        <translation>{host}：按 {price}/小时 计费 {billed}，共 {total}：工作 {busy}（{busy_time}），空闲 {idle}（{idle_time}），未观测 {unknown}（{unknown_time}）；有效算力占比 {effective}。</translation>
    </message>
    <message>
        <source>{host}: {billed} observed: busy {busy_time}, idle {idle_time}, not observed {unknown_time}; effective compute {effective}. Set a price per hour to see the cost.</source>
        <translation>{host}：已观测 {billed}：工作 {busy_time}，空闲 {idle_time}，未观测 {unknown_time}；有效算力占比 {effective}。设置每小时价格即可看到花费。</translation>
    </message>
    <message>
        <source>Budget {budget}: {budget_pct} used; at this rate it runs out at {exhausted}.</source>
        <translation>预算 {budget}：已用 {budget_pct}；按当前速度将在 {exhausted} 用完。</translation>
    </message>
    <message>
        <source>In 24 h at this rate: {projection}.</source>
        <translation>按当前速度 24 小时花费：{projection}。</translation>
    </message>
</context>
<context>
    <name>CostTab</name>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>Price</source>
        <translation>价格</translation>
    </message>
    <message>
        <source>In range</source>
        <translation>时间范围内</translation>
    </message>
    <message>
        <source>of which idle</source>
        <translation>其中空闲</translation>
    </message>
    <message>
        <source>Since billing start</source>
        <translation>开始计费以来</translation>
    </message>
    <message>
        <source>Busy share</source>
        <translation>工作占比</translation>
    </message>
    <message>
        <source>Next 24 h</source>
        <translation>未来 24 小时</translation>
    </message>
    <message>
        <source>Budget</source>
        <translation>预算</translation>
    </message>
    <message>
        <source>Billing</source>
        <translation>计费</translation>
    </message>
    <message>
        <source>running</source>
        <translation>计费中</translation>
    </message>
    <message>
        <source>stopped: storage only</source>
        <translation>已停止：仅存储计费</translation>
    </message>
    <message>
        <source>ended</source>
        <translation>已结束</translation>
    </message>
    <message>
        <source>cost in this range (currency)</source>
        <translation>此范围内花费（货币）</translation>
    </message>
    <message>
        <source>No host has a price per hour: set one in Hosts → Edit.</source>
        <translation>没有主机设置每小时价格：请在“主机 → 编辑”中设置。</translation>
    </message>
    <message>
        <source>mixed</source>
        <translation>多种货币</translation>
    </message>
    <message>
        <source>cost in this range ({currency})</source>
        <translation>此范围内花费（{currency}）</translation>
    </message>
    <message>
        <source> Only the {n} priciest hosts are drawn.</source>
        <translation> 只绘制最贵的 {n} 台主机。</translation>
    </message>
    <message>
        <source>{money} ({pct} % idle)</source>
        <translation>{money}（{pct} % 空闲）</translation>
    </message>
    <message>
        <source>In this range the fleet cost {money} (the selected host&apos;s idle part is shaded). </source>
        <translation>在此时间范围内整个机群花费 {money}（所选主机的空闲部分以阴影表示）。</translation>
    </message>
    <message>
        <source>At the current rates the next 24 h cost {money}.</source>
        <translation>按当前价格，未来 24 小时将花费 {money}。</translation>
    </message>
    <message>
        <source>Together about {money} by 24 h from now, {label}.</source>
        <translation>合计到 24 小时后约 {money}，{label}。</translation>
    </message>
    <message>
        <source>converted at your rates ({rates})</source>
        <translation>按你设定的汇率换算（{rates}）</translation>
    </message>
    <message>
        <source>Without a rate, not included: {c}.</source>
        <translation>没有汇率，未计入：{c}。</translation>
    </message>
    <message>
        <source>share of the paid time the GPUs were doing work</source>
        <translation>付费时间中 GPU 在工作的比例</translation>
    </message>
    <message>
        <source>Billing: running</source>
        <translation>计费：运行中</translation>
    </message>
    <message>
        <source>Billing: stopped, paying for storage</source>
        <translation>计费：已停止，仍付存储费</translation>
    </message>
    <message>
        <source>Billing: ended (returned)</source>
        <translation>计费：已结束（已退还）</translation>
    </message>
    <message>
        <source>stopped time so far cost {money} in storage</source>
        <translation>停止期间至今的存储费用为 {money}</translation>
    </message>
    <message>
        <source>watchdog acts at {time} unless cancelled</source>
        <translation>看门狗将于 {time} 执行，除非取消</translation>
    </message>
    <message>
        <source>watchdog acted: {outcome}</source>
        <translation>看门狗已执行：{outcome}</translation>
    </message>
    <message>
        <source>watchdog failed: {outcome}</source>
        <translation>看门狗执行失败：{outcome}</translation>
    </message>
    <message>
        <source>watchdog: cancelled</source>
        <translation>看门狗：已取消</translation>
    </message>
    <message>
        <source>watchdog armed but cannot act</source>
        <translation>看门狗已启用，但无法执行操作</translation>
    </message>
    <message>
        <source>watchdog armed</source>
        <translation>看门狗已启用</translation>
    </message>
    <message>
        <source>Watchdog ready: {reason}</source>
        <translation>看门狗就绪：{reason}</translation>
    </message>
    <message>
        <source>Watchdog cannot act now: {reason}</source>
        <translation>看门狗现在无法执行操作：{reason}</translation>
    </message>
    <message>
        <source>(idle {money})</source>
        <translation>（空闲 {money}）</translation>
    </message>
</context>
<context>
    <name>Evidence</name>
    <message>
        <source>previous sampler run</source>
        <translation>上一次采样器运行</translation>
    </message>
    <message>
        <source>new sampler run</source>
        <translation>新的采样器运行</translation>
    </message>
    <message>
        <source>first sample of the new run</source>
        <translation>新运行的第一个样本</translation>
    </message>
    <message>
        <source>time without samples</source>
        <translation>无样本时长</translation>
    </message>
    <message>
        <source>unsent samples lost</source>
        <translation>丢失的未发送样本</translation>
    </message>
    <message>
        <source>condition true since</source>
        <translation>条件成立起始时间</translation>
    </message>
    <message>
        <source>price per hour</source>
        <translation>每小时价格</translation>
    </message>
    <message>
        <source>GPU temperature</source>
        <translation>GPU 温度</translation>
    </message>
    <message>
        <source>memory temperature</source>
        <translation>显存温度</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
</context>
<context>
    <name>EvidenceExporter</name>
    <message>
        <source>Open folder</source>
        <translation>打开文件夹</translation>
    </message>
    <message>
        <source>Export evidence</source>
        <translation>导出证据</translation>
    </message>
    <message>
        <source>Evidence bundle (*.zip)</source>
        <translation>证据包 (*.zip)</translation>
    </message>
    <message>
        <source>{host}: an export is already being written</source>
        <translation>{host}：已有一份导出正在写入</translation>
    </message>
    <message>
        <source>writing the evidence for {host} to {path}…</source>
        <translation>正在把 {host} 的证据写入 {path}…</translation>
    </message>
    <message>
        <source> (plots left out: {why})</source>
        <translation>（未含图表：{why}）</translation>
    </message>
    <message>
        <source>evidence for {host} saved: {path}, {rows} GPU-samples</source>
        <translation>{host} 的证据已保存：{path}，{rows} 个 GPU 采样</translation>
    </message>
    <message>
        <source>the evidence for {host} was not written: {error}</source>
        <translation>{host} 的证据未能写入：{error}</translation>
    </message>
</context>
<context>
    <name>Findings</name>
    <message>
        <source>Driver {driver_version}, CUDA {cuda_version}{gpu_names}.</source>
        <translation>驱动 {driver_version}，CUDA {cuda_version}{gpu_names}。</translation>
    </message>
    <message>
        <source>{Where}: persistence mode is on.</source>
        <translation>{Where}：持久模式已开启。</translation>
    </message>
    <message>
        <source>{Where}: persistence mode is off, so every CUDA start and nvidia-smi call re-initializes the GPU (slow). Ask the provider, or run &apos;sudo nvidia-smi -pm 1&apos; if you may.</source>
        <translation>{Where}：持久模式未开启，每次启动 CUDA 或调用 nvidia-smi 都要重新初始化 GPU（很慢）。请联系服务商，或在有权限时运行 &apos;sudo nvidia-smi -pm 1&apos;。</translation>
    </message>
    <message>
        <source>{Where}: P-state P{pstate}, as expected.</source>
        <translation>{Where}：性能状态 P{pstate}，正常。</translation>
    </message>
    <message>
        <source>{Where}: in P{pstate} (its idle power state) although a process is running on it: the driver or the job has a problem.</source>
        <translation>{Where}：有进程在运行，却处于 P{pstate}（空闲功耗状态）：驱动或任务有问题。</translation>
    </message>
    <message>
        <source>{Where}: power limit {limit} W, the card&apos;s default ({default} W).</source>
        <translation>{Where}：功耗上限 {limit} W，与显卡默认值（{default} W）一致。</translation>
    </message>
    <message>
        <source>{Where}: power limited to {limit} W against its default of {default} W ({limit_pct}): this instance will be slower than the same card elsewhere. Save this and ask the provider for the full limit or another instance.</source>
        <translation>{Where}：功耗上限被限制为 {limit} W，默认应为 {default} W（{limit_pct}）：这个实例会比同型号的卡在别处慢。保存此结果，要求服务商恢复完整功耗上限或更换实例。</translation>
    </message>
    <message>
        <source>{Where}: {temp} °C, well under its slowdown temperature ({slowdown} °C).</source>
        <translation>{Where}：{temp} °C，远低于降频温度（{slowdown} °C）。</translation>
    </message>
    <message>
        <source>{Where}: already {temp} °C {load} (slowdown at {slowdown} °C): poor cooling, expect throttling under load.</source>
        <translation>{Where}：{load}已达 {temp} °C（降频阈值 {slowdown} °C）：散热差，满载时预计会降频。</translation>
    </message>
    <message>
        <source>{Where}: {temp} °C, at or near its slowdown temperature ({slowdown} °C): it will throttle. Ask for another instance.</source>
        <translation>{Where}：{temp} °C，已达到或接近降频温度（{slowdown} °C）：会降频。请要求更换实例。</translation>
    </message>
    <message>
        <source>{Where}: memory at {temp} °C (limit {limit} °C).</source>
        <translation>{Where}：显存温度 {temp} °C（上限 {limit} °C）。</translation>
    </message>
    <message>
        <source>{Where}: memory already at {temp} °C (limit {limit} °C): watch it under load.</source>
        <translation>{Where}：显存温度已达 {temp} °C（上限 {limit} °C）：满载时要留意。</translation>
    </message>
    <message>
        <source>{Where}: memory at {temp} °C, over 100 °C: risk of errors and damage. Change instance.</source>
        <translation>{Where}：显存温度 {temp} °C，超过 100 °C：有出错和损坏的风险。请更换实例。</translation>
    </message>
    <message>
        <source>{Where}: no other process uses it.</source>
        <translation>{Where}：没有其他进程占用。</translation>
    </message>
    <message>
        <source>{Where}: only your own processes use it: {procs}.</source>
        <translation>{Where}：只有你自己的进程在用：{procs}。</translation>
    </message>
    <message>
        <source>{Where}: {procs} already use it ({mem} of memory). Leftover jobs or someone else&apos;s: check before you start.</source>
        <translation>{Where}：{procs} 已在使用（占用显存 {mem}）。可能是残留任务或别人的进程：开始前请检查。</translation>
    </message>
    <message>
        <source>{Where}: {procs} looks like a mining program. Kill it, change the password and keys, and tell the provider.</source>
        <translation>{Where}：{procs} 看起来是挖矿程序。结束它，更换密码和密钥，并通知服务商。</translation>
    </message>
    <message>
        <source>{Where}: {mem} of memory is held by {count} process(es) that are not in this container (another tenant or the host): NVML reports them, but they cannot be seen or killed from here. If it stays taken, ask the provider.</source>
        <translation>{Where}：{mem} 显存被 {count} 个不在本容器中的进程占用（其他租户或宿主机）：NVML 报告了它们，但在这里既看不到也无法结束它们。如果一直被占用，请联系服务商。</translation>
    </message>
    <message>
        <source>{Where}: {procs} still hold the GPU after their job ended: the next job may run out of memory. End them with Kill tree… in the window or gpufleet kill --tree.</source>
        <translation>{Where}：{procs} 在其作业结束后仍占用 GPU：下一个作业可能会显存不足。请在窗口中用“结束进程树…”或用 gpufleet kill --tree 结束它们。</translation>
    </message>
    <message>
        <source>The sampler runs in a container with its own PID namespace: NVML reports the host&apos;s PIDs, so GPU processes are matched to this container&apos;s by the device files they hold.</source>
        <translation>采样器运行在拥有独立 PID 命名空间的容器中：NVML 报告的是宿主机的 PID，因此按进程打开的设备文件把 GPU 进程对应到本容器的进程。</translation>
    </message>
    <message>
        <source>The sampler runs in a container that shares the host&apos;s PID namespace: NVML&apos;s PIDs are the processes&apos;.</source>
        <translation>采样器运行在共享宿主机 PID 命名空间的容器中：NVML 的 PID 就是进程的 PID。</translation>
    </message>
    <message>
        <source>The sampler runs on the host itself (bare metal or a VM): NVML&apos;s PIDs are the processes&apos;.</source>
        <translation>采样器直接运行在主机上（物理机或虚拟机）：NVML 的 PID 就是进程的 PID。</translation>
    </message>
    <message>
        <source>{Where}: PCIe Gen{gen} x{width} (max Gen{max_gen} x{max_width}){idle_note}.</source>
        <translation>{Where}：PCIe Gen{gen} x{width}（最高 Gen{max_gen} x{max_width}）{idle_note}。</translation>
    </message>
    <message>
        <source>{Where}: PCIe link at Gen{gen} x{width} against a maximum of Gen{max_gen} x{max_width}: transfers will be slower. Ask the provider to check the slot.</source>
        <translation>{Where}：PCIe 链路为 Gen{gen} x{width}，最高应为 Gen{max_gen} x{max_width}：数据传输会变慢。请服务商检查插槽。</translation>
    </message>
    <message>
        <source>{Where}: all {links} NVLink links up.</source>
        <translation>{Where}：全部 {links} 条 NVLink 链路正常。</translation>
    </message>
    <message>
        <source>{Where}: only {up} of {links} NVLink links are up. Report it to the provider.</source>
        <translation>{Where}：{links} 条 NVLink 链路中只有 {up} 条正常。请报告给服务商。</translation>
    </message>
    <message>
        <source>{Where}: no ECC errors.</source>
        <translation>{Where}：没有 ECC 错误。</translation>
    </message>
    <message>
        <source>{Where}: a history of memory errors ({sbe} corrected, {dbe_agg} uncorrected over its life): usable, but watch it.</source>
        <translation>{Where}：有显存错误历史（累计已纠正 {sbe} 个，未纠正 {dbe_agg} 个）：可以使用，但要留意。</translation>
    </message>
    <message>
        <source>{Where}: {dbe} uncorrectable ECC error(s) since the driver loaded: results on this GPU may be wrong. Ask for another instance.</source>
        <translation>{Where}：驱动加载以来有 {dbe} 个不可纠正的 ECC 错误：这张 GPU 的计算结果可能出错。请要求更换实例。</translation>
    </message>
    <message>
        <source>{Where}: ECC is not reported (off, or not supported on this board).</source>
        <translation>{Where}：未报告 ECC（已关闭，或此卡不支持）。</translation>
    </message>
    <message>
        <source>{Where}: no memory rows remapped.</source>
        <translation>{Where}：没有重映射的显存行。</translation>
    </message>
    <message>
        <source>{Where}: {corr} memory row(s) remapped after correctable errors, {unc} after uncorrectable ones: the board has a history; usable.</source>
        <translation>{Where}：因可纠正错误重映射了 {corr} 个显存行，因不可纠正错误重映射了 {unc} 个：这张卡有错误历史；可以使用。</translation>
    </message>
    <message>
        <source>{Where}: a row remapping is {state}: the GPU needs {fix}. Ask the provider before you start.</source>
        <translation>{Where}：行重映射{state}：这张 GPU 需要{fix}。开始前请联系服务商。</translation>
    </message>
    <message>
        <source>{Where}: no retired pages pending.</source>
        <translation>{Where}：没有待退役的显存页。</translation>
    </message>
    <message>
        <source>{Where}: memory pages wait to be retired: the GPU needs a reset first.</source>
        <translation>{Where}：有显存页等待退役：需要先重置 GPU。</translation>
    </message>
    <message>
        <source>{Where}: no Xid error seen since {since}.</source>
        <translation>{Where}：自 {since} 以来未见 Xid 错误。</translation>
    </message>
    <message>
        <source>Xid errors could not be checked: no sampler daemon has been watching this host yet (from now on they are recorded).</source>
        <translation>无法检查 Xid 错误：还没有采样守护进程监视过这台主机（从现在起开始记录）。</translation>
    </message>
    <message>
        <source>{Where}: Xid {xids} seen ({xid_names}): usually application faults.</source>
        <translation>{Where}：出现过 Xid {xids}（{xid_names}）：通常是应用程序的问题。</translation>
    </message>
    <message>
        <source>{Where}: Xid {xids} seen ({xid_names}): a hardware or driver fault. Ask for another instance.</source>
        <translation>{Where}：出现过 Xid {xids}（{xid_names}）：硬件或驱动故障。请要求更换实例。</translation>
    </message>
    <message>
        <source>{Where}: lost (it does not answer the driver). The instance needs a reboot.</source>
        <translation>{Where}：掉卡（不响应驱动）。实例需要重启。</translation>
    </message>
    <message>
        <source>{Where}: {usable} of {total} memory usable ({reserved} reserved).</source>
        <translation>{Where}：显存 {total} 中可用 {usable}（预留 {reserved}）。</translation>
    </message>
    <message>
        <source>{Where}: {reserved} of its {total} memory ({reserved_pct}) is reserved by the driver or the virtualization layer: a model sized for the full card will run out of memory.</source>
        <translation>{Where}：{total} 显存中有 {reserved}（{reserved_pct}）被驱动或虚拟化层预留：按整卡显存规划的模型会显存不足（OOM）。</translation>
    </message>
    <message>
        <source>{Where}: the memory in use is held by the processes listed.</source>
        <translation>{Where}：使用中的显存均由所列进程占用。</translation>
    </message>
    <message>
        <source>{Where}: {hidden} of its memory is in use ({used} used) but the processes you can see hold only {held}: another tenant, a hidden reservation or a leaked context. Your job has that much less memory.</source>
        <translation>{Where}：有 {hidden} 显存处于使用中（共用 {used}），但您能看到的进程只占 {held}：可能是其他租户、隐藏的预留或泄漏的上下文。您的任务可用显存会少这么多。</translation>
    </message>
    <message>
        <source>{Where}: virtualization {mode}: the sensors are the card&apos;s own.</source>
        <translation>{Where}：虚拟化模式 {mode}：传感器读数来自显卡本身。</translation>
    </message>
    <message>
        <source>{Where}: a vGPU guest: some sensors (temperature, power, clocks reasons) may be hidden or shared with other tenants.</source>
        <translation>{Where}：vGPU 虚拟机：部分传感器（温度、功耗、降频原因）可能被隐藏或与其他租户共享。</translation>
    </message>
    <message>
        <source>{Where}: MIG is enabled: you see a slice of the GPU, not all of it.</source>
        <translation>{Where}：已启用 MIG：你看到的是 GPU 的一个切片，不是整张卡。</translation>
    </message>
    <message>
        <source>{Where} was slowed by temperature for {share} of the window: its SM clock averaged {clock} MHz ({clock_pct} of {clock_max} MHz) at up to {temp} °C (slowdown {slowdown} °C). That alone makes it about {lost_pct} slower: check the cooling or change instance.</source>
        <translation>{Where} 在该时段的 {share} 时间里因温度降频：SM 平均频率 {clock} MHz（{clock_max} MHz 的 {clock_pct}），最高温度 {temp} °C（降频阈值 {slowdown} °C）。仅此一项就慢了约 {lost_pct}：检查散热或更换实例。</translation>
    </message>
    <message>
        <source>{Where} is power limited to {limit} W against its default {default} W ({limit_pct}); its clocks averaged {clock_pct} of maximum while busy. Ask the provider for the full limit.</source>
        <translation>{Where} 的功耗上限被限制为 {limit} W，默认为 {default} W（{limit_pct}）；工作时频率平均为最高值的 {clock_pct}。请要求服务商恢复完整功耗上限。</translation>
    </message>
    <message>
        <source>{Where} is power limited to {limit} W against its default {default} W ({limit_pct}), but it drew {power} W on average while busy and the power-cap reason was rarely set: the limit did not slow this job (it would slow a heavier one).</source>
        <translation>{Where} 的功率上限为 {limit} W，默认值为 {default} W（{limit_pct}），但它忙碌时平均功耗为 {power} W，且很少出现功率封顶原因：该上限没有拖慢这个任务（但会拖慢更重的任务）。</translation>
    </message>
    <message>
        <source>{Where}&apos;s clocks were held down by a limit for {share} of the busy time ({held} of {span}): {held_by}.</source>
        <translation>{Where} 的频率在 {share} 的忙碌时间内被限制压低（{span} 中的 {held}）：{held_by}。</translation>
    </message>
    <message>
        <source>{Where} was held down by its hardware {hw_kind} for {share} of the busy time (clocks averaged {clock_pct} of maximum): a fault of the machine&apos;s power supply or cooling, not of your job. Report it to the provider with this evidence.</source>
        <translation>{Where} 在 {share} 的忙碌时间内被硬件{hw_kind}压低（平均频率为最高的 {clock_pct}）：这是机器供电或散热的故障，不是您任务的问题。请带着这些证据报告服务商。</translation>
    </message>
    <message>
        <source>{Where} ran at {clock_pct} of its maximum clock for {share} of the busy time because of a setting ({reasons}): reset applications clocks (&apos;sudo nvidia-smi -rac&apos;) or ask the provider.</source>
        <translation>由于一项设置（{reasons}），{Where} 在 {share} 的忙碌时间内只以最高频率的 {clock_pct} 运行：重置应用时钟（&apos;sudo nvidia-smi -rac&apos;）或联系服务商。</translation>
    </message>
    <message>
        <source>{Where}: {hidden} of its memory ({hidden_pct} of the card) was in use but held by no process you can see: another tenant, a reservation of the virtualization layer or a leaked context. Your job has that much less memory than the card&apos;s size says.</source>
        <translation>{Where}：有 {hidden} 显存（整卡的 {hidden_pct}）处于使用中，却不属于任何您能看到的进程：可能是其他租户、虚拟化层的预留或泄漏的上下文。您的任务可用显存比显卡标称容量少这么多。</translation>
    </message>
    <message>
        <source>{Where} held its clocks down to stay within its default power limit for {share} of the busy time (clocks averaged {clock_pct} of maximum): normal for a heavy load.</source>
        <translation>{Where} 在 {share} 的工作时间里为了不超过默认功耗上限而压低频率（平均为最高值的 {clock_pct}）：重负载下属于正常。</translation>
    </message>
    <message>
        <source>{Where} ran at {clock_pct} of its maximum clock while busy for {share} of the window with no reason reported: a limit outside the machine (virtualization host, provider) is likely. Compare with another instance.</source>
        <translation>{Where} 在该时段的 {share} 时间里工作时只跑到最高频率的 {clock_pct}，且没有报告原因：很可能是本机之外的限制（虚拟化宿主机、服务商）。请与另一个实例对比。</translation>
    </message>
    <message>
        <source>{Where} held {temp} °C for a minute or more against a slowdown temperature of {slowdown} °C.</source>
        <translation>{Where} 在 {temp} °C 保持了一分钟以上，其降频温度为 {slowdown} °C。</translation>
    </message>
    <message>
        <source>Before the crash, the memory of {where} held {temp} °C for 30 s or more (limit {mem_limit} °C; rising {rise} °C over the window).</source>
        <translation>崩溃之前，{where} 的显存在 {temp} °C 保持了 30 秒以上（上限 {mem_limit} °C；窗口内上升 {rise} °C）。</translation>
    </message>
    <message>
        <source>{Where} was shared: {procs} ran on it besides the main job, taking up to {mem} of memory. Two jobs on one GPU both run slower.</source>
        <translation>{Where} 被共享：除主任务外还运行了 {procs}，最多占用显存 {mem}。一张卡上跑两个任务，两个都会变慢。</translation>
    </message>
    <message>
        <source>{Where}&apos;s PCIe link ran at Gen{gen} x{width} instead of Gen{max_gen} x{max_width} while busy: transfers were slower.</source>
        <translation>{Where} 工作时 PCIe 链路以 Gen{gen} x{width} 运行，而不是 Gen{max_gen} x{max_width}：数据传输变慢。</translation>
    </message>
    <message>
        <source>{Where}&apos;s utilization went up and down {cycles} times (busy {busy_share} of the time) while PCIe carried only {pcie}: the GPU waits for data. Look at the data loader (workers, storage, preprocessing) before the hardware.</source>
        <translation>{Where} 的利用率起伏了 {cycles} 次（{busy_share} 的时间在工作），而 PCIe 只传输了 {pcie}：GPU 在等数据。先检查数据加载（workers、存储、预处理），再怀疑硬件。</translation>
    </message>
    <message>
        <source>{Where} logged {kind} memory errors at {at} ({count}): a hardware cause. Report it to the provider with this evidence.</source>
        <translation>{Where} 在 {at} 记录了 {kind} 显存错误（{count}）：硬件原因。请带着这份证据报告给服务商。</translation>
    </message>
    <message>
        <source>At {at}, {where} reported Xid {xid} ({xid_name}).</source>
        <translation>{at}，{where} 报告了 Xid {xid}（{xid_name}）。</translation>
    </message>
    <message>
        <source>At {at}, {where} fell off the bus (GPU lost): the job could not survive it.</source>
        <translation>{at}，{where} 从总线上掉线（掉卡）：任务无法继续。</translation>
    </message>
    <message>
        <source>At {at} the work stopped: utilization fell from {util_before} % to {util_after} % and memory from {mem_before} to {mem_after}{procs_note}.</source>
        <translation>{at} 工作停止：利用率从 {util_before} % 降到 {util_after} %，显存从 {mem_before} 降到 {mem_after}{procs_note}。</translation>
    </message>
    <message>
        <source>{Where}: only {up} of {links} NVLink links were up.</source>
        <translation>{Where}：{links} 条 NVLink 链路中只有 {up} 条正常。</translation>
    </message>
    <message>
        <source>Nothing in the hardware data explains it: clocks, power, temperatures, PCIe, memory errors and processes look normal over the window. Look at the code, the data pipeline and the checkpointing.</source>
        <translation>硬件数据中找不到原因：该时段内频率、功耗、温度、PCIe、显存错误和进程都正常。请检查代码、数据管道和检查点保存。</translation>
    </message>
    <message>
        <source>No samples in the window: nothing to diagnose.</source>
        <translation>该时段内没有采样数据：无法诊断。</translation>
    </message>
    <message>
        <source>Memory use peaked at {mem_peak} of the card: a smaller GPU or a shared instance would do for this job.</source>
        <translation>显存占用峰值只有整卡的 {mem_peak}：这个任务用更小的 GPU 或共享实例就够了。</translation>
    </message>
    <message>
        <source>Memory use peaked at {mem_peak} of the card and the GPU works in bursts (busy about {busy_share} of the time, {cycles} cycles): a fractional (vGPU) instance would cost less.</source>
        <translation>显存占用峰值只有整卡的 {mem_peak}，且 GPU 间歇工作（约 {busy_share} 的时间在忙，{cycles} 个周期）：租用算力切分（vGPU）实例会更便宜。</translation>
    </message>
    <message>
        <source>{Where} looked busy ({util_pct} % utilization) but its SMs were active only {sm_active} % of the time ({share} of the busy window): utilization counts the time any kernel ran, not how much of the GPU it used. The kernels are too small or run one after another: raise the batch size, fuse small kernels (torch.compile, CUDA graphs) and keep the host from feeding launches one by one.</source>
        <translation>{Where} 看起来很忙（利用率 {util_pct} %），但其 SM 只有 {sm_active} % 的时间处于活跃状态（占繁忙时段的 {share}）：利用率统计的是有内核运行的时间，而不是用了多少 GPU。内核太小或是一个接一个地串行运行：请增大 batch size，合并小内核（torch.compile、CUDA graphs），避免主机逐个下发内核。</translation>
    </message>
    <message>
        <source>{Where} looked busy ({util_pct} % utilization) but drew only {power_pct} of its {limit} W power limit: a GPU doing full work draws near its limit, so most of it waited. This GPU has no GPM counters (SM activity); the power draw stands in. Raise the batch size or fuse small kernels, and profile (Nsight Systems) to confirm.</source>
        <translation>{Where} 看起来很忙（利用率 {util_pct} %），但功耗只有 {limit} W 上限的 {power_pct}：满负荷工作的 GPU 功耗接近上限，所以它大部分时间在等待。这块 GPU 没有 GPM 计数器（SM 活跃度），以功耗代替。请增大 batch size 或合并小内核，并用 Nsight Systems 分析确认。</translation>
    </message>
    <message>
        <source>{Where} is memory-bound: DRAM was busy {dram_active} % of the time while its SMs were active only {sm_active} % ({share} of the busy window). More FLOPs will not help: fuse element-wise operations, use fused attention kernels, keep data in lower precision, or pick a GPU with more memory bandwidth.</source>
        <translation>{Where} 受显存带宽限制：DRAM 有 {dram_active} % 的时间处于繁忙状态，而 SM 只有 {sm_active} % 活跃（占繁忙时段的 {share}）。更多算力无济于事：请合并逐元素运算，使用融合的注意力内核，用更低精度保存数据，或选择显存带宽更高的 GPU。</translation>
    </message>
    <message>
        <source>{Where}&apos;s SMs worked ({sm_active} % active) but its tensor cores stayed idle ({tensor_active} % active) for {share} of the busy window. In a mixed-precision job the matrix products are not reaching the tensor cores: check that autocast (bf16/fp16) covers them, that TF32 is allowed, and that the dimensions are multiples of 8.</source>
        <translation>{Where} 的 SM 在工作（活跃度 {sm_active} %），但其 Tensor Core 在繁忙时段的 {share} 里处于空闲（活跃度 {tensor_active} %）。在混合精度任务中，矩阵乘法没有用到 Tensor Core：请检查 autocast（bf16/fp16）是否覆盖了它们、是否允许 TF32，以及矩阵维度是否为 8 的倍数。</translation>
    </message>
    <message>
        <source>{Where} computed in half precision (its FP16 pipes busy {fp16_active} % of the time) but its tensor cores stayed idle ({tensor_active} % active) for {share} of the busy window: the half-precision matrix products run on the ordinary cores, several times slower. Use the library&apos;s matmul and convolution kernels (cuBLAS, cuDNN) rather than hand-written ones, and keep the dimensions multiples of 8.</source>
        <translation>{Where} 在用半精度计算（FP16 流水线有 {fp16_active} % 的时间繁忙），但其 Tensor Core 在繁忙时段的 {share} 里处于空闲（活跃度 {tensor_active} %）：半精度矩阵乘法跑在普通核心上，慢好几倍。请使用库提供的矩阵乘法和卷积内核（cuBLAS、cuDNN），不要用手写内核，并让矩阵维度保持为 8 的倍数。</translation>
    </message>
    <message>
        <source>at idle</source>
        <translation>空闲时</translation>
    </message>
    <message>
        <source>under load</source>
        <translation>负载下</translation>
    </message>
    <message>
        <source>; the generation drops at idle on purpose</source>
        <translation>；空闲时降低代数是有意为之（节能）</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>pending</source>
        <translation>待生效</translation>
    </message>
    <message>
        <source>replacing</source>
        <translation>更换</translation>
    </message>
    <message>
        <source>a reset</source>
        <translation>重置</translation>
    </message>
    <message>
        <source>, and its process disappeared</source>
        <translation>，其进程也消失了</translation>
    </message>
    <message>
        <source>power brake</source>
        <translation>功率制动</translation>
    </message>
    <message>
        <source>slowdown signal</source>
        <translation>降频信号</translation>
    </message>
    <message>
        <source>PASS</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>WARN</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>FAIL</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>INFO</source>
        <translation>信息</translation>
    </message>
    <message>
        <source>?</source>
        <translation>?</translation>
    </message>
    <message>
        <source>N/A</source>
        <translation>不适用</translation>
    </message>
    <message>
        <source>At {at} the rules saw: {alert_sentence}</source>
        <translation>{at} 时规则发现：{alert_sentence}</translation>
    </message>
    <message>
        <source>From {quiet_since} the GPU was paid for and did nothing: {alert_sentence}</source>
        <translation>从 {quiet_since} 起，这块 GPU 在计费却什么也没做：{alert_sentence}</translation>
    </message>
    <message>
        <source>Memory was running out: {alert_sentence}</source>
        <translation>显存即将耗尽：{alert_sentence}</translation>
    </message>
    <message>
        <source>{alert_sentence}</source>
        <translation>{alert_sentence}</translation>
    </message>
    <message>
        <source>{Where} ran out of memory: used memory had grown from {mem_start} to {mem_peak} of {mem_usable} when the work stopped at {at}. The job died of memory exhaustion (a leak or a batch too large), not of the hardware.</source>
        <translation>{Where} 显存耗尽：工作在 {at} 停止时，显存占用已从 {mem_start} 增长到 {mem_peak}（可用 {mem_usable}）。任务死于显存耗尽（泄漏或 batch 过大），而不是硬件问题。</translation>
    </message>
    <message>
        <source>{Where}: whether the clocks were held down, and why, cannot be judged here: this instance does not report {hidden}.</source>
        <translation>{Where}：这里无法判断频率是否被压低以及原因：此实例不报告{hidden}。</translation>
    </message>
    <message>
        <source>{Where}: this instance hides {hidden}. What needs them (heat, power limits, throttling, memory errors) cannot be judged here, and is not called normal.</source>
        <translation>{Where}：此实例隐藏了{hidden}。依赖这些数据的判断（温度、功耗上限、降频、显存错误）在这里无法进行，也不会被当作正常。</translation>
    </message>
    <message>
        <source>Nothing in what this instance reports explains it; it does not report {hidden}, so those cannot be judged. Look at the code, the data pipeline and the checkpointing.</source>
        <translation>此实例报告的数据中没有能解释它的；它不报告{hidden}，所以这些无法判断。请检查代码、数据管道和检查点保存。</translation>
    </message>
    <message>
        <source>{Where}&apos;s power limit was changed: {limit_changes} (its default is {default} W). While it was at {limit} W its clocks averaged {clock_pct} of maximum while busy.</source>
        <translation>{Where} 的功耗上限被改过：{limit_changes}（默认值为 {default} W）。在 {limit} W 期间，它忙碌时的平均频率为最高频率的 {clock_pct}。</translation>
    </message>
    <message>
        <source>{before} W to {after} W at {at}</source>
        <translation>{at} 从 {before} W 改为 {after} W</translation>
    </message>
</context>
<context>
    <name>FleetPanel</name>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>Util</source>
        <translation>利用率</translation>
    </message>
    <message>
        <source>Hot</source>
        <translation>最高温</translation>
    </message>
    <message>
        <source>/h</source>
        <translation>/小时</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>Fleet</source>
        <translation>机群</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>Show this host, on the tab that explains the alert, at the moment it started</source>
        <translation>在说明该告警的标签页上显示这台主机，定位到告警开始的时刻</translation>
    </message>
    <message>
        <source>now</source>
        <translation>当前</translation>
    </message>
    <message>
        <source>{host}: {n} alert</source>
        <translation>{host}：{n} 条告警</translation>
    </message>
    <message>
        <source>{host}: {n} alerts</source>
        <translation>{host}：{n} 条告警</translation>
    </message>
    <message>
        <source>Alerts</source>
        <translation>告警</translation>
    </message>
    <message>
        <source>— none active</source>
        <translation>— 无活动告警</translation>
    </message>
</context>
<context>
    <name>GpuCard</name>
    <message>
        <source>GPU {n}</source>
        <translation>GPU {n}</translation>
    </message>
    <message>
        <source>GPU {n} · MIG {profile}</source>
        <translation>GPU {n} · MIG {profile}</translation>
    </message>
    <message>
        <source>util</source>
        <translation>利用率</translation>
    </message>
    <message>
        <source>mem</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>SM act</source>
        <translation>SM 活跃</translation>
    </message>
    <message>
        <source>{n} SMs ({share} of the card)</source>
        <translation>{n} 个 SM（占整卡的 {share}）</translation>
    </message>
</context>
<context>
    <name>HostDialog</name>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>agent</source>
        <translation>SSH 代理</translation>
    </message>
    <message>
        <source>key</source>
        <translation>密钥</translation>
    </message>
    <message>
        <source>password</source>
        <translation>密码</translation>
    </message>
    <message>
        <source>a host named {name} already exists</source>
        <translation>已存在名为 {name} 的主机</translation>
    </message>
    <message>
        <source>connected, but the test command failed: is python3 installed there?</source>
        <translation>已连接，但测试命令失败：那台机器上装了 python3 吗？</translation>
    </message>
    <message>
        <source>connected: python3 {py}, {gpus} GPU(s) listed by nvidia-smi</source>
        <translation>已连接：python3 {py}，nvidia-smi 列出 {gpus} 张 GPU</translation>
    </message>
    <message>
        <source>Edit {name}</source>
        <translation>编辑 {name}</translation>
    </message>
    <message>
        <source>Add a host</source>
        <translation>添加主机</translation>
    </message>
    <message>
        <source>Paste the SSH command, e.g. ssh -p 40022 root@203.0.113.7</source>
        <translation>粘贴租用平台给的 SSH 命令，例如 ssh -p 40022 root@203.0.113.7</translation>
    </message>
    <message>
        <source>Fill in</source>
        <translation>填入</translation>
    </message>
    <message>
        <source>optional: user@bastion:port</source>
        <translation>可选：user@跳板机:端口</translation>
    </message>
    <message>
        <source>password or key passphrase: kept in the OS keyring only</source>
        <translation>密码或密钥口令：只保存在系统密钥环中</translation>
    </message>
    <message>
        <source>not set</source>
        <translation>未设置</translation>
    </message>
    <message>
        <source>auto: the sampler, or nvidia-smi when the host has no python3 &gt;= 3.8. nvidia-smi records nothing while the laptop is away and cannot kill safely.</source>
        <translation>auto：使用采样器，主机没有 python3 &gt;= 3.8 时改用 nvidia-smi。nvidia-smi 在笔记本离线时不记录任何数据，也无法安全地结束进程。</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>端口</translation>
    </message>
    <message>
        <source>User</source>
        <translation>用户</translation>
    </message>
    <message>
        <source>Authentication</source>
        <translation>认证方式</translation>
    </message>
    <message>
        <source>Key file</source>
        <translation>密钥文件</translation>
    </message>
    <message>
        <source>Jump host</source>
        <translation>跳板机</translation>
    </message>
    <message>
        <source>Secret</source>
        <translation>密码/口令</translation>
    </message>
    <message>
        <source>Price per hour</source>
        <translation>每小时价格</translation>
    </message>
    <message>
        <source>Currency</source>
        <translation>货币</translation>
    </message>
    <message>
        <source>Read GPUs with</source>
        <translation>读取 GPU 的方式</translation>
    </message>
    <message>
        <source>Test connection</source>
        <translation>测试连接</translation>
    </message>
    <message>
        <source>SSH key</source>
        <translation>SSH 密钥</translation>
    </message>
    <message>
        <source>filled in from the command: check, then save</source>
        <translation>已根据命令填好：检查后保存</translation>
    </message>
    <message>
        <source>ignored (does not change which machine is reached): {what}</source>
        <translation>已忽略（不影响连接哪台机器）：{what}</translation>
    </message>
    <message>
        <source>give the host a name</source>
        <translation>请给主机起个名字</translation>
    </message>
    <message>
        <source>the host&apos;s address is missing</source>
        <translation>缺少主机地址</translation>
    </message>
    <message>
        <source>connecting to {host}…</source>
        <translation>正在连接 {host}…</translation>
    </message>
</context>
<context>
    <name>HostKeyPrompt</name>
    <message>
        <source>Unknown host key</source>
        <translation>未知的主机密钥</translation>
    </message>
    <message>
        <source>gpufleet has never connected to {label} before.</source>
        <translation>gpufleet 之前从未连接过 {label}。</translation>
    </message>
    <message>
        <source>Its {key_type} key fingerprint is:

{fingerprint}

Compare it with the one your provider shows (or `ssh-keygen -lf` on the host) before trusting it. Trusted keys are saved to known_hosts; a key that later changes is refused.</source>
        <translation>它的 {key_type} 密钥指纹是：

{fingerprint}

信任之前，请与服务商显示的指纹（或在主机上运行 `ssh-keygen -lf` 的结果）核对。信任的密钥会保存到 known_hosts；以后密钥若有变化将被拒绝。</translation>
    </message>
    <message>
        <source>Trust and connect</source>
        <translation>信任并连接</translation>
    </message>
    <message>
        <source>Do not connect</source>
        <translation>不连接</translation>
    </message>
</context>
<context>
    <name>HostRemoval</name>
    <message>
        <source>select a host first</source>
        <translation>请先选择一台主机</translation>
    </message>
    <message>
        <source>Remove {host}</source>
        <translation>移除 {host}</translation>
    </message>
    <message>
        <source>Remove {host} from gpufleet?</source>
        <translation>要从 gpufleet 中移除 {host} 吗？</translation>
    </message>
    <message>
        <source>gpufleet stops watching it and forgets its settings, its stored password or passphrase and its host key. Its recorded history (samples, alerts, kills) can stay, for `gpufleet export {host}` to read later, or be deleted now.</source>
        <translation>gpufleet 将停止监控它，并忘掉它的设置、已保存的密码或密钥口令以及主机密钥。它已记录的历史（样本、告警、结束进程记录）可以保留，供以后用 `gpufleet export {host}` 读取，也可以现在删除。</translation>
    </message>
    <message>
        <source>Remove, keep its history</source>
        <translation>移除，保留历史</translation>
    </message>
    <message>
        <source>Remove and delete its history</source>
        <translation>移除并删除历史</translation>
    </message>
    <message>
        <source>{host} removed, and its history deleted</source>
        <translation>已移除 {host}，并删除了它的历史</translation>
    </message>
    <message>
        <source>{host} removed; its history is kept</source>
        <translation>已移除 {host}；它的历史已保留</translation>
    </message>
    <message>
        <source>stored secrets not deleted: {why}</source>
        <translation>已保存的密码或密钥未删除：{why}</translation>
    </message>
    <message>
        <source>{host}: not removed from the config: {error}</source>
        <translation>{host}：未能从配置中移除：{error}</translation>
    </message>
</context>
<context>
    <name>ImportDialog</name>
    <message>
        <source>Import hosts from ~/.ssh/config</source>
        <translation>从 ~/.ssh/config 导入主机</translation>
    </message>
    <message>
        <source>reading ~/.ssh/config…</source>
        <translation>正在读取 ~/.ssh/config…</translation>
    </message>
    <message>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message>
        <source>{host} — already added</source>
        <translation>{host} — 已添加</translation>
    </message>
    <message>
        <source>{n} host aliases found</source>
        <translation>找到 {n} 个主机别名</translation>
    </message>
    <message>
        <source>{path} does not exist: there is no ssh config to import from. Add the host with Hosts ▸ Add host… (paste its ssh command) instead.</source>
        <translation>{path} 不存在：没有可导入的 ssh 配置。请改用 主机 ▸ 添加主机…（粘贴它的 ssh 命令）来添加主机。</translation>
    </message>
    <message>
        <source>{path} has no Host entries to import</source>
        <translation>{path} 中没有可导入的 Host 条目</translation>
    </message>
</context>
<context>
    <name>Instance</name>
    <message>
        <source>the gpufleet window</source>
        <translation>gpufleet 窗口</translation>
    </message>
    <message>
        <source>gpufleet serve</source>
        <translation>gpufleet serve</translation>
    </message>
    <message>
        <source>another gpufleet</source>
        <translation>另一个 gpufleet</translation>
    </message>
    <message>
        <source>{who} (pid {pid}, since {since})</source>
        <translation>{who}（pid {pid}，自 {since} 起）</translation>
    </message>
    <message>
        <source>{who} already uses the data dir {path}: a second gpufleet on it would send every notification and run every action and provider stop twice, so this one does not start. Use the one that is open (or quit it first), or give this one a data dir of its own with GPUFLEET_DATA_DIR.</source>
        <translation>{who} 已在使用数据目录 {path}：第二个 gpufleet 若也用它，每条通知都会发两次，每个操作和服务商停机也都会执行两次，所以这个不会启动。请使用已打开的那个（或先退出它），或用 GPUFLEET_DATA_DIR 给这个指定单独的数据目录。</translation>
    </message>
    <message>
        <source>gpufleet is already running</source>
        <translation>gpufleet 已在运行</translation>
    </message>
</context>
<context>
    <name>InterconnectTab</name>
    <message>
        <source>PCIe throughput</source>
        <translation>PCIe 吞吐量</translation>
    </message>
    <message>
        <source>nominal {value} per GPU per direction</source>
        <translation>标称每张 GPU 每个方向 {value}</translation>
    </message>
    <message>
        <source>NVLink: not present on this machine (PCIe only)</source>
        <translation>NVLink：本机没有（仅 PCIe）</translation>
    </message>
    <message>
        <source>{now} of {max}</source>
        <translation>{now}（最高 {max}）</translation>
    </message>
    <message>
        <source>PCIe link of all {n} GPUs: {now} (max {max})</source>
        <translation>全部 {n} 张 GPU 的 PCIe 链路：{now}（最高 {max}）</translation>
    </message>
    <message>
        <source>PCIe link (now of max): </source>
        <translation>PCIe 链路（当前/最高）：</translation>
    </message>
    <message>
        <source>NVLink per link</source>
        <translation>逐链路显示 NVLink</translation>
    </message>
    <message>
        <source>TX bright, RX dark</source>
        <translation>发送亮色、接收暗色</translation>
    </message>
    <message>
        <source>PCIe (GB/s)</source>
        <translation>PCIe (GB/s)</translation>
    </message>
    <message>
        <source>NVLink (GB/s)</source>
        <translation>NVLink (GB/s)</translation>
    </message>
    <message>
        <source>Per-link NVLink traffic and state, every 5 s</source>
        <translation>每条 NVLink 链路的流量与状态，每 5 秒一次</translation>
    </message>
    <message>
        <source>No NVLink on this host: {why}</source>
        <translation>此主机没有 NVLink：{why}</translation>
    </message>
    <message>
        <source>no NVLink links</source>
        <translation>没有 NVLink 链路</translation>
    </message>
    <message>
        <source>Waiting for the first per-link values (sent every {s} s).</source>
        <translation>正在等待第一批逐链路数据（每 {s} 秒发送一次）。</translation>
    </message>
    <message>
        <source>TX+RX per link (GB/s) at {time}; colour: share of the link&apos;s nominal {nominal} each way, dark 0 % to yellow 100 %</source>
        <translation>{time} 时每条链路的发送+接收 (GB/s)；颜色：占该链路单向标称带宽 {nominal} 的比例，深色 0 % 到黄色 100 %</translation>
    </message>
    <message>
        <source>All {links} NVLink links of {gpus} GPUs are up; the busiest carries {pct} of its nominal bandwidth.</source>
        <translation>{gpus} 块 GPU 的全部 {links} 条 NVLink 链路均已连通；最繁忙的链路达到其标称带宽的 {pct}。</translation>
    </message>
    <message>
        <source>GPU {gpu} link {link}</source>
        <translation>GPU {gpu} 链路 {link}</translation>
    </message>
    <message>
        <source>&lt;b&gt;NVLink down: {names}.&lt;/b&gt; GPU {gpu} runs on {up} of {total} links: its all-reduce traffic is squeezed onto the others, its total stays below nominal and every GPU waiting for it slows down.</source>
        <translation>&lt;b&gt;NVLink 断开：{names}。&lt;/b&gt;GPU {gpu} 只用 {total} 条链路中的 {up} 条运行：其 all-reduce 流量被挤到其余链路上，总带宽低于标称值，等待它的每块 GPU 都会变慢。</translation>
    </message>
    <message>
        <source>GPU {gpu} link {link} ({value} vs {reference})</source>
        <translation>GPU {gpu} 链路 {link}（{value}，其他链路 {reference}）</translation>
    </message>
    <message>
        <source>Slower than its sibling links: {names}.</source>
        <translation>比同一 GPU 的其他链路慢：{names}。</translation>
    </message>
    <message>
        <source>Check on the instance with &lt;code&gt;nvidia-smi nvlink -s&lt;/code&gt; (and &lt;code&gt;nvidia-smi nvlink -e&lt;/code&gt; for errors); if a link stays down or slow, ask the provider to move you to another node.</source>
        <translation>在实例上用 &lt;code&gt;nvidia-smi nvlink -s&lt;/code&gt; 检查（错误计数用 &lt;code&gt;nvidia-smi nvlink -e&lt;/code&gt;）；如果链路一直断开或偏慢，请服务商把你迁移到另一台节点。</translation>
    </message>
    <message>
        <source>down</source>
        <translation>断开</translation>
    </message>
</context>
<context>
    <name>KillDialog</name>
    <message>
        <source>not reported</source>
        <translation>未报告</translation>
    </message>
    <message>
        <source>{gpus} ({n} GPUs)</source>
        <translation>{gpus}（{n} 块 GPU）</translation>
    </message>
    <message>
        <source>{each} on each GPU</source>
        <translation>每块 GPU {each}</translation>
    </message>
    <message>
        <source>{per}; {total} in all</source>
        <translation>{per}；共 {total}</translation>
    </message>
    <message>
        <source>Send {signal} to PID {pid} and its tree on {host}?</source>
        <translation>向 {host} 上的 PID {pid} 及其进程树发送 {signal}？</translation>
    </message>
    <message>
        <source>Send {signal} to PID {pid} on {host}?</source>
        <translation>向 {host} 上的 PID {pid} 发送 {signal}？</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>PID</source>
        <translation>PID</translation>
    </message>
    <message>
        <source>{pid} (started at tick {ticks}; a reused PID is refused)</source>
        <translation>{pid}（启动于 tick {ticks}；PID 被复用时会拒绝发送）</translation>
    </message>
    <message>
        <source>Host PID (NVML)</source>
        <translation>宿主机 PID（NVML）</translation>
    </message>
    <message>
        <source>none: NVML lists no memory for it</source>
        <translation>无：NVML 未列出它占用的显存</translation>
    </message>
    <message>
        <source>Match</source>
        <translation>对应</translation>
    </message>
    <message>
        <source>User</source>
        <translation>用户</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>进程名</translation>
    </message>
    <message>
        <source>Command</source>
        <translation>命令</translation>
    </message>
    <message>
        <source>GPU memory</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>gpufleet sends &lt;b&gt;{signal}&lt;/b&gt; and waits up to {grace} s for it to exit.</source>
        <translation>gpufleet 会发送 &lt;b&gt;{signal}&lt;/b&gt;，并最多等待 {grace} 秒让它退出。</translation>
    </message>
    <message>
        <source>&lt;b&gt;KILL&lt;/b&gt; ends it at once: it gets no chance to save anything.</source>
        <translation>&lt;b&gt;KILL&lt;/b&gt; 会立即结束它：它没有机会保存任何东西。</translation>
    </message>
    <message>
        <source>Its children and, when its job is gone, the rest of its process group get the same signal (each checked by its start time). gpufleet then watches NVML until their GPU memory is released.</source>
        <translation>它的子进程，以及在其作业已结束时进程组中的其余进程，都会收到同一信号（每个都按启动时间核对）。随后 gpufleet 观察 NVML，直到它们的显存被释放。</translation>
    </message>
    <message>
        <source>Send {signal}</source>
        <translation>发送 {signal}</translation>
    </message>
    <message>
        <source>Send {signal} to the tree</source>
        <translation>向进程树发送 {signal}</translation>
    </message>
    <message>
        <source>exact (the sampler shares NVML&apos;s PID namespace)</source>
        <translation>精确（采样器与 NVML 共用 PID 命名空间）</translation>
    </message>
    <message>
        <source>orphan: its job is gone, it still holds the GPU</source>
        <translation>孤儿进程：其作业已结束，但仍占用 GPU</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>5 min</source>
        <translation>5 分钟</translation>
    </message>
    <message>
        <source>30 min</source>
        <translation>30 分钟</translation>
    </message>
    <message>
        <source>1 h</source>
        <translation>1 小时</translation>
    </message>
    <message>
        <source>6 h</source>
        <translation>6 小时</translation>
    </message>
    <message>
        <source>24 h</source>
        <translation>24 小时</translation>
    </message>
    <message>
        <source>gpufleet — demo fleet</source>
        <translation>gpufleet — 演示机群</translation>
    </message>
    <message>
        <source>follow live</source>
        <translation>跟随实时</translation>
    </message>
    <message>
        <source>starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message>
        <source>&amp;Hosts</source>
        <translation>主机(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Settings</source>
        <translation>设置(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Preferences…</source>
        <translation>首选项(&amp;P)…</translation>
    </message>
    <message>
        <source>Export evidence…</source>
        <translation>导出证据…</translation>
    </message>
    <message>
        <source>Save a zip of this host&apos;s data around the alert: metrics, plots, events</source>
        <translation>把这台主机在告警前后的数据存成 zip：指标、图表、事件</translation>
    </message>
    <message>
        <source>E&amp;xport evidence for the selected host…</source>
        <translation>导出所选主机的证据(&amp;X)…</translation>
    </message>
    <message>
        <source>{n} hosts</source>
        <translation>{n} 台主机</translation>
    </message>
    <message>
        <source>{n} host</source>
        <translation>{n} 台主机</translation>
    </message>
    <message>
        <source>{n} streaming</source>
        <translation>{n} 台在线</translation>
    </message>
    <message>
        <source>{n} down</source>
        <translation>{n} 台掉线</translation>
    </message>
    <message>
        <source>{n} samples/s</source>
        <translation>{n} 个采样/秒</translation>
    </message>
    <message>
        <source>history {size} MiB</source>
        <translation>历史数据 {size} MiB</translation>
    </message>
    <message>
        <source>{n} events dropped (the app fell behind)</source>
        <translation>丢弃了 {n} 个事件（程序处理不过来）</translation>
    </message>
    <message>
        <source>{n} history write errors</source>
        <translation>历史记录写入失败 {n} 次</translation>
    </message>
    <message>
        <source>{n} events not recorded (flood limit)</source>
        <translation>{n} 个事件未记录（超出频率限制）</translation>
    </message>
    <message>
        <source>{n} failed batches (see the log)</source>
        <translation>{n} 批数据处理失败（见日志）</translation>
    </message>
    <message>
        <source>Fleet</source>
        <translation>机群</translation>
    </message>
    <message>
        <source>{hosts} host · {gpus} GPUs · {rate}/h</source>
        <translation>{hosts} 台主机 · {gpus} 块 GPU · {rate}/小时</translation>
    </message>
    <message>
        <source>{hosts} hosts · {gpus} GPUs · {rate}/h</source>
        <translation>{hosts} 台主机 · {gpus} 张 GPU · {rate}/小时</translation>
    </message>
    <message>
        <source> · spent {money}</source>
        <translation> · 已花费 {money}</translation>
    </message>
    <message>
        <source>pass-through</source>
        <translation>直通</translation>
    </message>
    <message>
        <source>vGPU guest</source>
        <translation>vGPU 虚拟机</translation>
    </message>
    <message>
        <source>MIG: {n} slices</source>
        <translation>MIG：{n} 个切片</translation>
    </message>
    <message>
        <source>mixed GPUs</source>
        <translation>混合型号 GPU</translation>
    </message>
    <message>
        <source>driver {version}</source>
        <translation>驱动 {version}</translation>
    </message>
    <message>
        <source>read through nvidia-smi: no offline ring, no kill</source>
        <translation>通过 nvidia-smi 读取：无离线缓存，不能结束进程</translation>
    </message>
    <message>
        <source>{backend} sampler {version}</source>
        <translation>{backend} 采样器 {version}</translation>
    </message>
</context>
<context>
    <name>MarkMine</name>
    <message>
        <source>Mark as mine</source>
        <translation>标记为我的进程</translation>
    </message>
    <message>
        <source>This process is yours: add its name to the host&apos;s allowed processes in config.toml, so that it is no longer flagged there</source>
        <translation>这个进程是你的：把它的名字加入 config.toml 中该主机的允许进程列表，该主机上就不会再标记它</translation>
    </message>
</context>
<context>
    <name>MemoryTab</name>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>PID</source>
        <translation>PID</translation>
    </message>
    <message>
        <source>Host PID</source>
        <translation>宿主机 PID</translation>
    </message>
    <message>
        <source>Match</source>
        <translation>对应</translation>
    </message>
    <message>
        <source>User</source>
        <translation>用户</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>进程名</translation>
    </message>
    <message>
        <source>Command</source>
        <translation>命令</translation>
    </message>
    <message>
        <source>GPU memory</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>SM %</source>
        <translation>SM %</translation>
    </message>
    <message>
        <source>exact</source>
        <translation>精确</translation>
    </message>
    <message>
        <source>probable</source>
        <translation>可能</translation>
    </message>
    <message>
        <source>not in this container</source>
        <translation>不在本容器中</translation>
    </message>
    <message>
        <source>no memory NVML can see</source>
        <translation>NVML 看不到其显存</translation>
    </message>
    <message>
        <source>NVML&apos;s entry is this process: the only one here that holds this GPU</source>
        <translation>NVML 的这一条目就是此进程：这里只有它占用此 GPU</translation>
    </message>
    <message>
        <source>Matched to NVML&apos;s entry by creation order (host PIDs and start times both grow); the process itself is certain, its memory figure is a best guess</source>
        <translation>按创建顺序与 NVML 条目对应（宿主机 PID 与启动时间都随时间增长）；进程本身是确定的，显存数字是最佳推测</translation>
    </message>
    <message>
        <source>NVML reports this memory, but no process in this container holds the GPU for it: another tenant or the host. It cannot be seen or killed from here</source>
        <translation>NVML 报告了这部分显存，但本容器中没有进程为此占用该 GPU：属于其他租户或宿主机。在这里既看不到也无法结束它</translation>
    </message>
    <message>
        <source>Holds the GPU&apos;s device file but NVML lists no memory for it: often a dataloader worker or a process keeping a context</source>
        <translation>打开了 GPU 的设备文件，但 NVML 未列出其显存：常见于数据加载 worker 或保留着上下文的进程</translation>
    </message>
    <message>
        <source>memory used (GiB)</source>
        <translation>显存占用 (GiB)</translation>
    </message>
    <message>
        <source>Processes</source>
        <translation>进程</translation>
    </message>
    <message>
        <source>Kill…</source>
        <translation>结束进程…</translation>
    </message>
    <message>
        <source>Send TERM to the selected process (after a confirmation)</source>
        <translation>向所选进程发送 TERM（需确认）</translation>
    </message>
    <message>
        <source>Kill tree…</source>
        <translation>结束进程树…</translation>
    </message>
    <message>
        <source>Send TERM to the selected process, its children and its orphaned process group (dataloader workers keep GPU memory after their parent dies)</source>
        <translation>向所选进程、其子进程及其孤立的进程组发送 TERM（父进程退出后，数据加载 worker 仍会占着显存）</translation>
    </message>
    <message>
        <source>total {value}</source>
        <translation>总量 {value}</translation>
    </message>
    <message>
        <source>usable (total − reserved) {value}</source>
        <translation>可用（总量 − 预留）{value}</translation>
    </message>
    <message>
        <source>memory used</source>
        <translation>显存占用</translation>
    </message>
    <message>
        <source> · snapshot {time}</source>
        <translation> · 快照时间 {time}</translation>
    </message>
    <message>
        <source> · in a container: PID is the container&apos;s, Host PID NVML&apos;s</source>
        <translation> · 在容器中：PID 是容器内的，宿主机 PID 来自 NVML</translation>
    </message>
    <message>
        <source>Processes on {host}: {n}</source>
        <translation>{host} 上的进程：{n} 个</translation>
    </message>
    <message>
        <source>Not in this container: NVML&apos;s host PID {pid} belongs to another tenant or the host, so it cannot be killed from here</source>
        <translation>不在本容器中：NVML 的宿主机 PID {pid} 属于其他租户或宿主机，无法在这里结束</translation>
    </message>
    <message>
        <source>Its start time is unknown (it may have ended): not killed blind</source>
        <translation>其启动时间未知（可能已经结束）：不会盲目结束它</translation>
    </message>
    <message>
        <source>The sampler shares the PID namespace NVML reports: the PID is the process</source>
        <translation>采样器与 NVML 报告的 PID 命名空间相同：PID 就是该进程</translation>
    </message>
    <message>
        <source>orphan</source>
        <translation>孤儿进程</translation>
    </message>
    <message>
        <source>Its job is gone (its process group&apos;s leader has ended) but it still holds the GPU: Kill tree… ends it and its group</source>
        <translation>其作业已结束（进程组组长已退出），但它仍占用 GPU：“结束进程树…”会结束它及其进程组</translation>
    </message>
</context>
<context>
    <name>Notifier</name>
    <message>
        <source>{n} more alerts; open gpufleet to see them</source>
        <translation>另有 {n} 条告警；打开 gpufleet 查看</translation>
    </message>
</context>
<context>
    <name>OverviewTab</name>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>型号</translation>
    </message>
    <message>
        <source>Util</source>
        <translation>利用率</translation>
    </message>
    <message>
        <source>SM active</source>
        <translation>SM 活跃度</translation>
    </message>
    <message>
        <source>SM clock</source>
        <translation>SM 频率</translation>
    </message>
    <message>
        <source>Temp</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Power</source>
        <translation>功耗</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>P</source>
        <translation>P 状态</translation>
    </message>
    <message>
        <source>Why</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>Price</source>
        <translation>价格</translation>
    </message>
    <message>
        <source>{hosts} host, {gpus} GPUs; </source>
        <translation>{hosts} 台主机，{gpus} 张 GPU；</translation>
    </message>
    <message>
        <source>{hosts} hosts, {gpus} GPUs; </source>
        <translation>{hosts} 台主机，{gpus} 张 GPU；</translation>
    </message>
    <message>
        <source>{n} of them MIG slices; </source>
        <translation>其中 {n} 个是 MIG 切片；</translation>
    </message>
    <message>
        <source>{n} row needs attention, listed first. </source>
        <translation>{n} 行需要注意，已排在最前。</translation>
    </message>
    <message>
        <source>{n} rows need attention, listed first. </source>
        <translation>{n} 行需要注意，已排在最前。</translation>
    </message>
    <message>
        <source>all healthy. </source>
        <translation>全部正常。</translation>
    </message>
    <message>
        <source>Double-click a row to open that host; click a header to sort.</source>
        <translation>双击一行打开该主机；点击表头排序。</translation>
    </message>
</context>
<context>
    <name>Plots</name>
    <message>
        <source>throttle reasons</source>
        <translation>降频原因</translation>
    </message>
    <message>
        <source>GPU {n}</source>
        <translation>GPU {n}</translation>
    </message>
</context>
<context>
    <name>PromWiring</name>
    <message>
        <source>Alertmanager receiver: {error}</source>
        <translation>Alertmanager 接收器：{error}</translation>
    </message>
    <message>
        <source>cannot serve metrics on {address}: {error}</source>
        <translation>无法在 {address} 上提供指标：{error}</translation>
    </message>
</context>
<context>
    <name>ProviderDrift</name>
    <message>
        <source>{provider}&apos;s API changed ({endpoint}: {said}); gpufleet needs an update. Until then this host&apos;s billing is not synced from {provider} and provider actions on it cannot run.</source>
        <translation>{provider} 的 API 已变更（{endpoint}：{said}）；需要更新 gpufleet。在此之前，该主机的计费不会从 {provider} 同步，针对它的服务商操作也无法执行。</translation>
    </message>
    <message>
        <source>{error}. Until gpufleet is updated, this host&apos;s billing is not synced from its provider and provider actions on it cannot run.</source>
        <translation>{error}。在更新 gpufleet 之前，该主机的计费不会从其服务商同步，针对它的服务商操作也无法执行。</translation>
    </message>
    <message>
        <source>provider API changed: update gpufleet</source>
        <translation>服务商 API 已变更：请更新 gpufleet</translation>
    </message>
</context>
<context>
    <name>ProviderHosts</name>
    <message>
        <source>not connecting: the instance is stopped at the provider (billed for its storage only); gpufleet connects again when it runs</source>
        <translation>不连接：该实例已在服务商处停止（只按存储计费）；它再次运行时 gpufleet 会重新连接</translation>
    </message>
    <message>
        <source>not connecting: the instance has ended at the provider</source>
        <translation>不连接：该实例已在服务商处终止</translation>
    </message>
    <message>
        <source>set {var}, or enter the key in Settings ▸ Providers (or run `gpufleet providers login {provider}`)</source>
        <translation>请设置 {var}，或在 设置 ▸ 服务商 中输入密钥（或运行 `gpufleet providers login {provider}`）</translation>
    </message>
    <message>
        <source>no {label} API key: {where}</source>
        <translation>没有 {label} 的 API 密钥：{where}</translation>
    </message>
    <message>
        <source>no {label} API key: {var} is not set and the OS keyring cannot be read ({why}); set {var}, or unlock the keyring and enter the key in Settings ▸ Providers</source>
        <translation>没有 {label} 的 API 密钥：{var} 未设置，且无法读取系统密钥环（{why}）；请设置 {var}，或解锁密钥环后在 设置 ▸ 服务商 中输入密钥</translation>
    </message>
    <message>
        <source>no keyring service is running</source>
        <translation>没有运行中的密钥环服务</translation>
    </message>
    <message>
        <source>it is locked</source>
        <translation>密钥环已锁定</translation>
    </message>
    <message>
        <source>its backend keeps secrets in plain files</source>
        <translation>它的后端把密钥以明文文件保存</translation>
    </message>
    <message>
        <source>it failed</source>
        <translation>读取失败</translation>
    </message>
</context>
<context>
    <name>ProviderImportDialog</name>
    <message>
        <source>Import hosts from a provider</source>
        <translation>从云服务商导入主机</translation>
    </message>
    <message>
        <source>List instances</source>
        <translation>列出实例</translation>
    </message>
    <message>
        <source>The API key comes from VAST_API_KEY / RUNPOD_API_KEY / LAMBDA_API_KEY or `gpufleet providers login NAME` (OS keyring).</source>
        <translation>API 密钥来自 VAST_API_KEY / RUNPOD_API_KEY / LAMBDA_API_KEY，或 `gpufleet providers login NAME`（系统钥匙串）。</translation>
    </message>
    <message>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message>
        <source>asking {provider}…</source>
        <translation>正在询问 {provider}…</translation>
    </message>
    <message>
        <source>add {name}: {ssh}, {price}</source>
        <translation>添加 {name}：{ssh}，{price}</translation>
    </message>
    <message>
        <source>update {name}: {fields}</source>
        <translation>更新 {name}：{fields}</translation>
    </message>
    <message>
        <source>{n} change(s); {other} instance(s) unchanged or without SSH</source>
        <translation>{n} 项更改；{other} 个实例未变或没有 SSH</translation>
    </message>
    <message>
        <source>skipped instance {id}: {why}</source>
        <translation>已跳过实例 {id}：{why}</translation>
    </message>
    <message>
        <source>The provider&apos;s API changed and this version of gpufleet cannot read it: update gpufleet. ({detail})</source>
        <translation>服务商的 API 已变更，此版本的 gpufleet 无法读取：请更新 gpufleet。（{detail}）</translation>
    </message>
</context>
<context>
    <name>ProviderKeysTab</name>
    <message>
        <source>paste the {provider} API key</source>
        <translation>粘贴 {provider} 的 API 密钥</translation>
    </message>
    <message>
        <source>Save key</source>
        <translation>保存密钥</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>测试</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Keys are kept in the OS keyring, never in the config file, and saved at once. An environment variable (VAST_API_KEY, RUNPOD_API_KEY, LAMBDA_API_KEY) wins over a stored key.</source>
        <translation>密钥保存在系统密钥环中，从不写入配置文件，并立即保存。环境变量（VAST_API_KEY、RUNPOD_API_KEY、LAMBDA_API_KEY）优先于已保存的密钥。</translation>
    </message>
    <message>
        <source>from {var} (the environment variable wins over a stored key)</source>
        <translation>来自 {var}（环境变量优先于已保存的密钥）</translation>
    </message>
    <message>
        <source>stored in the keyring</source>
        <translation>已保存在密钥环中</translation>
    </message>
    <message>
        <source>no key: paste one and Save key, or set {var}</source>
        <translation>没有密钥：粘贴一个并点“保存密钥”，或设置 {var}</translation>
    </message>
    <message>
        <source>the keyring cannot be read: {why}</source>
        <translation>无法读取密钥环：{why}</translation>
    </message>
    <message>
        <source>paste a key first</source>
        <translation>请先粘贴密钥</translation>
    </message>
    <message>
        <source>saved in the keyring</source>
        <translation>已保存到密钥环</translation>
    </message>
    <message>
        <source>asking {provider}…</source>
        <translation>正在询问 {provider}…</translation>
    </message>
    <message>
        <source>the key works: {n} instance(s) in the account</source>
        <translation>密钥可用：账户中有 {n} 个实例</translation>
    </message>
    <message>
        <source>removed from the keyring</source>
        <translation>已从密钥环中删除</translation>
    </message>
    <message>
        <source>no key was stored</source>
        <translation>没有已保存的密钥</translation>
    </message>
</context>
<context>
    <name>Readout</name>
    <message>
        <source>idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>clock setting</source>
        <translation>时钟设置</translation>
    </message>
    <message>
        <source>power cap</source>
        <translation>功耗墙</translation>
    </message>
    <message>
        <source>HW slowdown</source>
        <translation>硬件降频</translation>
    </message>
    <message>
        <source>sync boost</source>
        <translation>同步加速</translation>
    </message>
    <message>
        <source>SW thermal</source>
        <translation>软件温控</translation>
    </message>
    <message>
        <source>HW thermal</source>
        <translation>硬件温控</translation>
    </message>
    <message>
        <source>power brake</source>
        <translation>功率制动</translation>
    </message>
    <message>
        <source>display clocks</source>
        <translation>显示时钟</translation>
    </message>
</context>
<context>
    <name>Reasons</name>
    <message>
        <source>gpu_idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>clocks_setting</source>
        <translation>应用频率设置</translation>
    </message>
    <message>
        <source>power_cap</source>
        <translation>功耗墙</translation>
    </message>
    <message>
        <source>hw_slowdown</source>
        <translation>硬件降频</translation>
    </message>
    <message>
        <source>sync_boost</source>
        <translation>同步加速</translation>
    </message>
    <message>
        <source>sw_thermal</source>
        <translation>软件温控降频</translation>
    </message>
    <message>
        <source>hw_thermal</source>
        <translation>硬件温控降频</translation>
    </message>
    <message>
        <source>hw_power_brake</source>
        <translation>硬件功率制动</translation>
    </message>
    <message>
        <source>display_clocks</source>
        <translation>显示频率设置</translation>
    </message>
    <message>
        <source>nothing to run: the GPU lowers its clock on purpose; no loss</source>
        <translation>没有任务可运行：GPU 主动降低频率；没有损失</translation>
    </message>
    <message>
        <source>the applications-clocks setting (nvidia-smi -ac) caps the clock: someone&apos;s choice, reset with nvidia-smi -rac</source>
        <translation>应用时钟设置（nvidia-smi -ac）限制了频率：这是有人刻意设置的，可用 nvidia-smi -rac 重置</translation>
    </message>
    <message>
        <source>the software power cap: the GPU keeps within its enforced limit; normal under heavy load at the default limit, a loss when the limit is below the default</source>
        <translation>软件功率封顶：GPU 保持在其强制功率上限内；默认上限下重负载时属正常，上限低于默认值时则是损失</translation>
    </message>
    <message>
        <source>the hardware slowdown signal: the board&apos;s over-temperature or power-supply protection; never seen on a healthy machine</source>
        <translation>硬件降频信号：板卡的过温或供电保护；健康的机器上从不出现</translation>
    </message>
    <message>
        <source>a sync boost group: every GPU of the group runs at the slowest member&apos;s clock</source>
        <translation>同步加速组：组内每块 GPU 都以最慢成员的频率运行</translation>
    </message>
    <message>
        <source>software thermal slowdown: the GPU is near its slowdown temperature</source>
        <translation>软件温控降频：GPU 接近其降频温度</translation>
    </message>
    <message>
        <source>hardware thermal slowdown: the GPU is too hot and cuts its clock hard</source>
        <translation>硬件温控降频：GPU 过热并大幅降低频率</translation>
    </message>
    <message>
        <source>the hardware power brake: the machine&apos;s power supply asked the GPU to slow down; a power delivery fault</source>
        <translation>硬件功率制动：机器的电源要求 GPU 降速；属于供电故障</translation>
    </message>
    <message>
        <source>the display clock setting limits the clock (a display-related setting)</source>
        <translation>显示时钟设置限制了频率（与显示相关的设置）</translation>
    </message>
    <message>
        <source>thermal</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>HW slowdown / power brake</source>
        <translation>硬件降频 / 功率制动</translation>
    </message>
    <message>
        <source>power cap</source>
        <translation>功耗墙</translation>
    </message>
    <message>
        <source>clock setting / sync boost</source>
        <translation>频率设置 / 同步加速</translation>
    </message>
</context>
<context>
    <name>Rules</name>
    <message>
        <source>SW or HW thermal slowdown reason bits set: the GPU slows itself down because it is hot</source>
        <translation>软件或硬件温控降频标志被置位：GPU 因为过热自行降频</translation>
    </message>
    <message>
        <source>HW slowdown (0x8) or HW power brake (0x80) reason set: the board&apos;s power-supply or over-temperature protection holds the clock down (a machine fault)</source>
        <translation>出现硬件降频（0x8）或硬件功率制动（0x80）原因：板卡的供电或过温保护压低了频率（机器故障）</translation>
    </message>
    <message>
        <source>busy and held well under the max clock by a setting: applications clocks (0x2), sync boost (0x10) or the display clock (0x100)</source>
        <translation>忙碌时被某项设置压到远低于最高频率：应用时钟（0x2）、同步加速（0x10）或显示时钟（0x100）</translation>
    </message>
    <message>
        <source>memory in use that no listed process holds (used minus the processes&apos; memory): another tenant, a hidden reservation, a leaked context</source>
        <translation>使用中但不属于任何所列进程的显存（已用减去各进程显存）：其他租户、隐藏预留、泄漏的上下文</translation>
    </message>
    <message>
        <source>the sampler started a new run (a new run_id): the daemon or the host restarted</source>
        <translation>采样器开始了新的运行（新的 run_id）：守护进程或主机重启了</translation>
    </message>
    <message>
        <source>the instance&apos;s own watchdog is armed but its action cannot run any more</source>
        <translation>实例自身的看门狗已启用，但其操作已无法执行</translation>
    </message>
    <message>
        <source>enforced power limit below the card&apos;s default (e.g. 300 W against 450 W)</source>
        <translation>实际功耗上限低于显卡默认值（例如 300 W，默认 450 W）</translation>
    </message>
    <message>
        <source>power-cap reason while busy at the default limit: working as designed (a note)</source>
        <translation>在默认功耗上限下工作时触发功耗墙：正常设计行为（提示）</translation>
    </message>
    <message>
        <source>busy, SM clock well under its maximum, and no reason reported</source>
        <translation>正在工作，SM 频率远低于最高值，且没有报告原因</translation>
    </message>
    <message>
        <source>GPU temperature within a few degrees of its slowdown threshold</source>
        <translation>GPU 温度距降频阈值只差几度</translation>
    </message>
    <message>
        <source>memory temperature within a few degrees of its maximum</source>
        <translation>显存温度距最高值只差几度</translation>
    </message>
    <message>
        <source>memory temperature at its own limit (NVML&apos;s MEM_MAX threshold), or over 100 °C where no limit is reported</source>
        <translation>显存温度达到其自身上限（NVML 的 MEM_MAX 阈值），或在未报告上限时超过 100 °C</translation>
    </message>
    <message>
        <source>every GPU under 5 % utilization and 10 % memory: paying for an idle host</source>
        <translation>每张 GPU 利用率低于 5 %、显存低于 10 %：在为空闲主机付费</translation>
    </message>
    <message>
        <source>a process not in the host&apos;s allow-list uses a GPU</source>
        <translation>不在主机允许列表中的进程在使用 GPU</translation>
    </message>
    <message>
        <source>a well-known mining program uses a GPU</source>
        <translation>常见的挖矿程序在使用 GPU</translation>
    </message>
    <message>
        <source>GPU in its idle P-state (P8) while a process works on it</source>
        <translation>有进程在运行时 GPU 却处于空闲性能状态（P8）</translation>
    </message>
    <message>
        <source>the uncorrectable (double-bit) ECC error count increased</source>
        <translation>不可纠正（双比特）ECC 错误计数增加</translation>
    </message>
    <message>
        <source>a memory row remapping waits for a GPU reset</source>
        <translation>显存行重映射等待 GPU 重置</translation>
    </message>
    <message>
        <source>a memory row remapping failed</source>
        <translation>显存行重映射失败</translation>
    </message>
    <message>
        <source>memory pages wait to be retired at the next reset</source>
        <translation>显存页等待在下次重置时退役</translation>
    </message>
    <message>
        <source>the driver reported an Xid error (critical codes named: 48, 63, 64, 74, 79, 92, 94, 95, 119, 120, ...)</source>
        <translation>驱动报告了 Xid 错误（严重错误码：48、63、64、74、79、92、94、95、119、120 等）</translation>
    </message>
    <message>
        <source>a GPU stopped answering (fell off the bus)</source>
        <translation>GPU 不再响应（掉卡）</translation>
    </message>
    <message>
        <source>PCIe link below its max generation or width while busy (not at idle P-states)</source>
        <translation>工作时 PCIe 链路低于最高代数或宽度（空闲性能状态除外）</translation>
    </message>
    <message>
        <source>fewer NVLink links up than the GPU has</source>
        <translation>正常的 NVLink 链路少于 GPU 拥有的数量</translation>
    </message>
    <message>
        <source>the PCIe replay counter rising (retransmissions on the link), not its total</source>
        <translation>PCIe 重放计数在上升（链路上的重传），而不是其总数</translation>
    </message>
    <message>
        <source>NVLink carrying under half what the host&apos;s other GPUs carry, a link up but idle while its siblings are busy, or rising NVLink error counters (never nominal alone)</source>
        <translation>NVLink 传输量不到本机其他 GPU 的一半、某条链路处于连接状态却在其他链路繁忙时闲置，或 NVLink 错误计数上升（从不只对照标称值）</translation>
    </message>
    <message>
        <source>no sample from the host&apos;s sampler although the link is up and it did not restart</source>
        <translation>连接正常且采样器未重启，却收不到主机采样器的样本</translation>
    </message>
    <message>
        <source>memory used above a share of its own capacity (a MIG slice: of the slice&apos;s)</source>
        <translation>显存占用超过其自身容量的一定比例（MIG 切片按切片自身的容量计）</translation>
    </message>
    <message>
        <source>the host cannot be reached over SSH</source>
        <translation>无法通过 SSH 连接主机</translation>
    </message>
    <message>
        <source>the instance&apos;s own watchdog will act on the idle, billed host unless cancelled</source>
        <translation>实例自带的看门狗将对空闲且计费的主机执行操作，除非被取消</translation>
    </message>
    <message>
        <source>the instance&apos;s own watchdog acted: stopped, powered off or ran your command</source>
        <translation>实例自带的看门狗已执行操作：停止实例、关闭电源或运行了你的命令</translation>
    </message>
    <message>
        <source>the instance&apos;s own watchdog failed to act: the host is still billed</source>
        <translation>实例自带的看门狗未能执行操作：主机仍在计费</translation>
    </message>
    <message>
        <source>what the instance&apos;s own watchdog said last: it will act, it acted, it failed</source>
        <translation>实例自带的看门狗最近的状态：将要执行、已执行或执行失败</translation>
    </message>
    <message>
        <source>the host&apos;s cost reached a share of its budget</source>
        <translation>主机花费达到预算的一定比例</translation>
    </message>
    <message>
        <source>a metric above a threshold (user rule)</source>
        <translation>指标高于阈值（用户规则）</translation>
    </message>
    <message>
        <source>a metric below a threshold (user rule)</source>
        <translation>指标低于阈值（用户规则）</translation>
    </message>
    <message>
        <source>no work (utilization and SM activity near zero, P8 or idle power, no PCIe traffic) while a process holds 10 % or more of the memory: a hung job or a forgotten notebook; after 5 min where the GPU had been working, else 15 min</source>
        <translation>没有工作（利用率和 SM 活跃度接近零，P8 或空闲功耗，没有 PCIe 流量），却有进程占用 10 % 或更多显存：任务卡死或 notebook 被遗忘；GPU 之前在工作时 5 分钟后告警，否则 15 分钟</translation>
    </message>
    <message>
        <source>used memory rising steadily towards the usable total (a leak): warns with the projected time to full while it is under 2 h away</source>
        <translation>显存占用持续向可用总量上升（泄漏）：预计不到 2 小时就会占满时发出警告，并给出预计时间</translation>
    </message>
    <message>
        <source>a GPU process under a kernel thread&apos;s name, or one that appeared 30 min or more after the job from another user or outside this container</source>
        <translation>以内核线程名字运行的 GPU 进程，或在任务启动 30 分钟或更久之后出现、来自其他用户或本容器之外的进程</translation>
    </message>
</context>
<context>
    <name>Sensors</name>
    <message>
        <source>GPU temperature</source>
        <translation>GPU 温度</translation>
    </message>
    <message>
        <source>memory temperature</source>
        <translation>显存温度</translation>
    </message>
    <message>
        <source>power draw</source>
        <translation>功耗</translation>
    </message>
    <message>
        <source>power limit</source>
        <translation>功耗上限</translation>
    </message>
    <message>
        <source>clock event reasons</source>
        <translation>降频原因</translation>
    </message>
    <message>
        <source>ECC errors</source>
        <translation>ECC 错误</translation>
    </message>
    <message>
        <source>NVLink</source>
        <translation>NVLink</translation>
    </message>
    <message>
        <source>processes</source>
        <translation>进程</translation>
    </message>
    <message>
        <source>Reports {reported}; hides {hidden}.</source>
        <translation>报告：{reported}；隐藏：{hidden}。</translation>
    </message>
    <message>
        <source>Reports every sensor ({reported}).</source>
        <translation>报告全部传感器（{reported}）。</translation>
    </message>
    <message>
        <source>GPUs {gpus}</source>
        <translation>GPU {gpus}</translation>
    </message>
    <message>
        <source>GPU {gpu}</source>
        <translation>GPU {gpu}</translation>
    </message>
    <message>
        <source>{gpus}: {text}</source>
        <translation>{gpus}：{text}</translation>
    </message>
</context>
<context>
    <name>Sentences</name>
    <message>
        <source>GPU idle</source>
        <translation>GPU 空闲</translation>
    </message>
    <message>
        <source>applications clocks setting</source>
        <translation>应用频率设置</translation>
    </message>
    <message>
        <source>SW power cap</source>
        <translation>软件功耗墙</translation>
    </message>
    <message>
        <source>HW slowdown</source>
        <translation>硬件降频</translation>
    </message>
    <message>
        <source>sync boost</source>
        <translation>同步加速</translation>
    </message>
    <message>
        <source>SW thermal slowdown</source>
        <translation>软件温控降频</translation>
    </message>
    <message>
        <source>HW thermal slowdown</source>
        <translation>硬件温控降频</translation>
    </message>
    <message>
        <source>HW power brake</source>
        <translation>硬件功率制动</translation>
    </message>
    <message>
        <source>display clock setting</source>
        <translation>显示频率设置</translation>
    </message>
    <message>
        <source>{n} s</source>
        <translation>{n} 秒</translation>
    </message>
    <message>
        <source>{n} min</source>
        <translation>{n} 分钟</translation>
    </message>
    <message>
        <source>{n} h</source>
        <translation>{n} 小时</translation>
    </message>
    <message>
        <source>No clock samples in this window yet.</source>
        <translation>此时间范围内还没有频率数据。</translation>
    </message>
    <message>
        <source>No GPU was throttled in this window: SM clocks steady at {value} MHz.</source>
        <translation>此时间段内没有 GPU 降频：SM 时钟稳定在 {value} MHz。</translation>
    </message>
    <message>
        <source>No GPU was throttled in this window: SM clocks {lo}–{hi} MHz. Clocks below the max with no reason shown are the GPU idling or boosting normally.</source>
        <translation>此时间范围内没有 GPU 降频：SM 频率 {lo}–{hi} MHz。低于最高频率但没有显示原因，是 GPU 在正常空闲或睿频。</translation>
    </message>
    <message>
        <source>a clock event</source>
        <translation>频率事件</translation>
    </message>
    <message>
        <source> It is at {t} °C, the others {lo}–{hi} °C.</source>
        <translation> 它的温度为 {t} °C，其他 GPU 为 {lo}–{hi} °C。</translation>
    </message>
    <message>
        <source> It is at {t} °C.</source>
        <translation> 它的温度为 {t} °C。</translation>
    </message>
    <message>
        <source> A cooling problem on this machine, not your code: ask the provider to move you.</source>
        <translation> 这是这台机器的散热问题，不是你的代码：请服务商给你换机器。</translation>
    </message>
    <message>
        <source> The power cap holds the clock: check the enforced limit on Thermal &amp;amp; power.</source>
        <translation> 功耗墙压住了频率：请在“温度与功耗”页查看实际功耗上限。</translation>
    </message>
    <message>
        <source> HW slowdown or power brake usually means a power supply or temperature fault.</source>
        <translation> 硬件降频或功率制动通常意味着电源或温度故障。</translation>
    </message>
    <message>
        <source>{pct} % below its max clock</source>
        <translation>频率比最高值低 {pct} %</translation>
    </message>
    <message>
        <source>at reduced clocks</source>
        <translation>频率有所降低</translation>
    </message>
    <message>
        <source>GPU {gpu} has run {how} for {duration} because of {why}.</source>
        <translation>GPU {gpu} 受{why}影响已持续 {duration}，{how}。</translation>
    </message>
    <message>
        <source>GPU {gpu}&apos;s memory reached {peak} °C, at its limit of {limit} °C: the memory throttles there; ask the provider to check the cooling.</source>
        <translation>GPU {gpu} 的显存温度达到 {peak} °C，已到其上限 {limit} °C：显存会在此降频；请服务商检查散热。</translation>
    </message>
    <message>
        <source>GPU {gpu} peaked at {peak} °C, right at its slowdown point.</source>
        <translation>GPU {gpu} 最高 {peak} °C，正好达到降频温度。</translation>
    </message>
    <message>
        <source>GPU {gpu} peaked at {peak} °C, {margin} °C above its slowdown point of {sd} °C.</source>
        <translation>GPU {gpu} 最高 {peak} °C，超过降频点 {sd} °C 达 {margin} °C。</translation>
    </message>
    <message>
        <source>GPU {gpu} peaked at {peak} °C, {margin} °C below its slowdown point of {sd} °C.</source>
        <translation>GPU {gpu} 最高 {peak} °C，距降频点 {sd} °C 只差 {margin} °C。</translation>
    </message>
    <message>
        <source>GPU {gpu}&apos;s enforced power limit is {limit} W, below the card&apos;s default {default} W: expect about {pct} % less throughput under full load.</source>
        <translation>GPU {gpu} 的实际功耗上限为 {limit} W，低于显卡默认的 {default} W：满载时吞吐量预计降低约 {pct} %。</translation>
    </message>
    <message>
        <source>No temperature samples in this window yet.</source>
        <translation>此时间范围内还没有温度数据。</translation>
    </message>
    <message>
        <source>, power {lo}–{hi} W</source>
        <translation>，功耗 {lo}–{hi} W</translation>
    </message>
    <message>
        <source>Temperatures {lo}–{hi} °C, well below the slowdown points{power}; power limits are at their defaults.</source>
        <translation>温度 {lo}–{hi} °C，远低于降频点{power}；功耗上限均为默认值。</translation>
    </message>
    <message>
        <source>No memory samples in this window yet.</source>
        <translation>此时间范围内还没有显存数据。</translation>
    </message>
    <message>
        <source>No GPU holds memory: all {total} GiB of each GPU are free.</source>
        <translation>没有 GPU 占用显存：每块 GPU 的 {total} GiB 全部空闲。</translation>
    </message>
    <message>
        <source>GPU {gpu} uses the most memory: {used} of {total} GiB ({pct} %).</source>
        <translation>GPU {gpu} 显存占用最多：{used} / {total} GiB（{pct} %）。</translation>
    </message>
    <message>
        <source> Close to full: an allocation spike will fail with out-of-memory.</source>
        <translation> 接近占满：一次分配高峰就会显存不足（OOM）。</translation>
    </message>
    <message>
        <source> {n} GPUs hold less than 10 %: idle capacity you pay for.</source>
        <translation> {n} 张 GPU 显存占用不到 10 %：你在为闲置的算力付费。</translation>
    </message>
    <message>
        <source> {n} GPU holds less than 10 %: idle capacity you pay for.</source>
        <translation> {n} 张 GPU 显存占用不到 10 %：你在为闲置的算力付费。</translation>
    </message>
    <message>
        <source>GPU {gpu} runs at x{w} of x{max}</source>
        <translation>GPU {gpu} 以 x{w} 运行（最高 x{max}）</translation>
    </message>
    <message>
        <source>GPU {gpu} at Gen{gen} of Gen{max}</source>
        <translation>GPU {gpu} 为 Gen{gen}（最高 Gen{max}）</translation>
    </message>
    <message>
        <source>; </source>
        <translation>；</translation>
    </message>
    <message>
        <source>. A narrower link halves host↔GPU bandwidth; a lower generation at idle is normal power saving, under load it is a riser or slot problem.</source>
        <translation>。链路宽度减半会让主机↔GPU 带宽减半；空闲时代数降低是正常节能，负载下降低则是转接卡或插槽有问题。</translation>
    </message>
    <message>
        <source>GPU {gpus} reports no PCIe link state (a lost GPU reports none: see its alert); the other links run at their full generation and width.</source>
        <translation>GPU {gpus} 未报告 PCIe 链路状态（掉卡的 GPU 什么都不报告：见其告警）；其余链路以完整的代数和宽度运行。</translation>
    </message>
    <message>
        <source>No GPU reports its PCIe link state here: it cannot be judged.</source>
        <translation>此处没有 GPU 报告其 PCIe 链路状态：无法判断。</translation>
    </message>
    <message>
        <source>PCIe links run at their full generation and width. TX is GPU→host, RX host→GPU; NVLink carries GPU↔GPU traffic, against each GPU&apos;s nominal bandwidth.</source>
        <translation>PCIe 链路以完整的代数和宽度运行。发送（TX）为 GPU→主机，接收（RX）为主机→GPU；NVLink 承载 GPU↔GPU 流量，并与每张 GPU 的标称带宽对比。</translation>
    </message>
</context>
<context>
    <name>Settings</name>
    <message>
        <source>{address}: not a usable HOST:PORT address ({why})</source>
        <translation>{address}：不是可用的 主机:端口 地址（{why}）</translation>
    </message>
    <message>
        <source>webhook name {name!r}: use letters, digits, &apos;.&apos;, &apos;_&apos; or &apos;-&apos; (up to 64)</source>
        <translation>Webhook 名称 {name!r}：只能使用字母、数字、&apos;.&apos;、&apos;_&apos; 或 &apos;-&apos;（最多 64 个）</translation>
    </message>
    <message>
        <source>webhook name {name!r} is used twice</source>
        <translation>Webhook 名称 {name!r} 重复使用</translation>
    </message>
    <message>
        <source>the downsampled history ({rollup} days) must be kept at least as long as the full-resolution samples ({raw} days)</source>
        <translation>降采样历史（{rollup} 天）的保留时间不能短于完整精度采样（{raw} 天）</translation>
    </message>
    <message>
        <source>the exporter and the Alertmanager receiver cannot share port {port}</source>
        <translation>导出器和 Alertmanager 接收器不能共用端口 {port}</translation>
    </message>
    <message>
        <source>webhook {name!r}: the URL must be an https:// (or http://) address</source>
        <translation>Webhook {name!r}：URL 必须是 https://（或 http://）地址</translation>
    </message>
    <message>
        <source>the Alertmanager token must be 16+ characters without spaces</source>
        <translation>Alertmanager 令牌必须至少 16 个字符且不含空格</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>System language</source>
        <translation>跟随系统语言</translation>
    </message>
    <message>
        <source>Follow the system</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <source>DingTalk</source>
        <translation>钉钉</translation>
    </message>
    <message>
        <source>WeCom</source>
        <translation>企业微信</translation>
    </message>
    <message>
        <source>info</source>
        <translation>提示</translation>
    </message>
    <message>
        <source>warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>critical</source>
        <translation>严重</translation>
    </message>
    <message>
        <source>minutes</source>
        <translation>分钟</translation>
    </message>
    <message>
        <source>per minute</source>
        <translation>条/分钟</translation>
    </message>
    <message>
        <source>days</source>
        <translation>天</translation>
    </message>
    <message>
        <source>gpufleet settings</source>
        <translation>gpufleet 设置</translation>
    </message>
    <message>
        <source>General</source>
        <translation>常规</translation>
    </message>
    <message>
        <source>Notifications</source>
        <translation>通知</translation>
    </message>
    <message>
        <source>History</source>
        <translation>历史数据</translation>
    </message>
    <message>
        <source>Exporters</source>
        <translation>导出器</translation>
    </message>
    <message>
        <source>Webhooks</source>
        <translation>Webhook</translation>
    </message>
    <message>
        <source>Providers</source>
        <translation>服务商</translation>
    </message>
    <message>
        <source>The refresh rate, notifications and autostart apply at once; the other settings when gpufleet starts next.</source>
        <translation>刷新率、通知和开机启动立即生效；其他设置在下次启动 gpufleet 时生效。</translation>
    </message>
    <message>
        <source> — fix the file; nothing will be saved.</source>
        <translation> — 请先修正该文件；现在不会保存任何内容。</translation>
    </message>
    <message>
        <source>Start gpufleet when I log in</source>
        <translation>登录时启动 gpufleet</translation>
    </message>
    <message>
        <source>Only on Linux desktops (XDG autostart) in this version</source>
        <translation>此版本仅支持 Linux 桌面（XDG 自动启动）</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>Theme</source>
        <translation>主题</translation>
    </message>
    <message>
        <source>Plot refresh rate</source>
        <translation>图表刷新率</translation>
    </message>
    <message>
        <source>Show desktop notifications for alerts</source>
        <translation>为告警显示桌面通知</translation>
    </message>
    <message>
        <source>Repeat the same alert at most every</source>
        <translation>同一告警重复提醒的最短间隔</translation>
    </message>
    <message>
        <source>At most</source>
        <translation>最多</translation>
    </message>
    <message>
        <source>Keep full-resolution samples for</source>
        <translation>完整精度采样保留</translation>
    </message>
    <message>
        <source>Keep downsampled history for</source>
        <translation>降采样历史保留</translation>
    </message>
    <message>
        <source>Serve the fleet&apos;s metrics to Prometheus</source>
        <translation>向 Prometheus 提供机群指标</translation>
    </message>
    <message>
        <source>Receive alerts from an Alertmanager</source>
        <translation>接收 Alertmanager 的告警</translation>
    </message>
    <message>
        <source>type to store a new token in the keyring</source>
        <translation>输入新令牌以保存到密钥环</translation>
    </message>
    <message>
        <source>Exporter address</source>
        <translation>导出器地址</translation>
    </message>
    <message>
        <source>Receiver address</source>
        <translation>接收器地址</translation>
    </message>
    <message>
        <source>Receiver token</source>
        <translation>接收器令牌</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Format</source>
        <translation>格式</translation>
    </message>
    <message>
        <source>Minimum severity</source>
        <translation>最低级别</translation>
    </message>
    <message>
        <source>URL</source>
        <translation>URL</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Rules send to webhooks by name (notify = [&quot;NAME&quot;] in rules.toml). The URL carries its token, so it is kept in the system keyring, not in the config file.</source>
        <translation>规则按名称发送到 Webhook（rules.toml 中的 notify = [&quot;NAME&quot;]）。URL 中带有令牌，因此保存在系统密钥环中，而不是配置文件里。</translation>
    </message>
    <message>
        <source>https://… (required)</source>
        <translation>https://…（必填）</translation>
    </message>
    <message>
        <source>stored; type to replace</source>
        <translation>已保存；输入新值可替换</translation>
    </message>
    <message>
        <source>Repeat interval</source>
        <translation>重复间隔</translation>
    </message>
    <message>
        <source>Notifications per minute</source>
        <translation>每分钟通知数</translation>
    </message>
    <message>
        <source>Full-resolution history</source>
        <translation>完整精度历史</translation>
    </message>
    <message>
        <source>Downsampled history</source>
        <translation>降采样历史</translation>
    </message>
    <message>
        <source>webhook %1: type its URL</source>
        <translation>Webhook %1：请输入它的 URL</translation>
    </message>
    <message>
        <source>cannot change the autostart entry: %1</source>
        <translation>无法修改自动启动项：%1</translation>
    </message>
</context>
<context>
    <name>SshCommand</name>
    <message>
        <source>-o ProxyCommand is not supported: use -J (ProxyJump) or an alias of ~/.ssh/config</source>
        <translation>不支持 -o ProxyCommand：请使用 -J（ProxyJump）或 ~/.ssh/config 中的别名</translation>
    </message>
    <message>
        <source>bad port {text}: expected a number from 1 to 65535</source>
        <translation>端口 {text} 无效：应为 1 到 65535 之间的数字</translation>
    </message>
    <message>
        <source>bad address in {dest}: unclosed &apos;[&apos;</source>
        <translation>{dest} 中的地址无效：&apos;[&apos; 未闭合</translation>
    </message>
    <message>
        <source>bad address in {dest}</source>
        <translation>{dest} 中的地址无效</translation>
    </message>
    <message>
        <source>empty command: paste an ssh command such as `ssh -p 2222 root@host`</source>
        <translation>命令为空：请粘贴 ssh 命令，例如 `ssh -p 2222 root@host`</translation>
    </message>
    <message>
        <source>cannot split the command line ({error})</source>
        <translation>无法解析命令行（{error}）</translation>
    </message>
    <message>
        <source>not an ssh command: it should start with `ssh` (got {got}); e.g. `ssh -p 2222 root@host`</source>
        <translation>不是 ssh 命令：应以 `ssh` 开头（实际为 {got}）；例如 `ssh -p 2222 root@host`</translation>
    </message>
    <message>
        <source>bad -o option {value}: expected Key=Value</source>
        <translation>-o 选项 {value} 无效：应为 键=值</translation>
    </message>
    <message>
        <source>unknown ssh option -{letter} in {arg}</source>
        <translation>{arg} 中有未知的 ssh 选项 -{letter}</translation>
    </message>
    <message>
        <source>ssh option -{letter} needs a value</source>
        <translation>ssh 选项 -{letter} 需要一个值</translation>
    </message>
    <message>
        <source>no destination: add `user@host` (or `ssh://user@host:port`)</source>
        <translation>缺少目标主机：请加上 `user@host`（或 `ssh://user@host:port`）</translation>
    </message>
    <message>
        <source>bad host name {host} in {dest}</source>
        <translation>{dest} 中的主机名 {host} 无效</translation>
    </message>
    <message>
        <source>bad user name {user}</source>
        <translation>用户名 {user} 无效</translation>
    </message>
</context>
<context>
    <name>State</name>
    <message>
        <source>ok</source>
        <translation>正常</translation>
    </message>
    <message>
        <source>warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>critical</source>
        <translation>严重</translation>
    </message>
    <message>
        <source>down</source>
        <translation>掉线</translation>
    </message>
    <message>
        <source>waiting</source>
        <translation>等待中</translation>
    </message>
    <message>
        <source>connecting</source>
        <translation>连接中</translation>
    </message>
    <message>
        <source>deploying</source>
        <translation>部署中</translation>
    </message>
    <message>
        <source>streaming</source>
        <translation>在线</translation>
    </message>
    <message>
        <source>reconnecting</source>
        <translation>重连中</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>no GPU</source>
        <translation>无 GPU</translation>
    </message>
    <message>
        <source>NVML failed</source>
        <translation>NVML 失败</translation>
    </message>
    <message>
        <source>idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>not supported</source>
        <translation>不支持</translation>
    </message>
    <message>
        <source>no permission</source>
        <translation>无权限</translation>
    </message>
    <message>
        <source>not in this driver</source>
        <translation>此驱动不提供</translation>
    </message>
    <message>
        <source>GPU lost</source>
        <translation>GPU 掉卡</translation>
    </message>
    <message>
        <source>unknown error</source>
        <translation>未知错误</translation>
    </message>
</context>
<context>
    <name>Summary</name>
    <message>
        <source>GPU lost</source>
        <translation>GPU 掉卡</translation>
    </message>
    <message>
        <source>thermal throttling</source>
        <translation>温度过高降频</translation>
    </message>
    <message>
        <source>HW slowdown</source>
        <translation>硬件降频</translation>
    </message>
    <message>
        <source>at power cap</source>
        <translation>触及功耗墙</translation>
    </message>
    <message>
        <source>mixed</source>
        <translation>混合型号</translation>
    </message>
    <message>
        <source> ({n} MIG slices)</source>
        <translation>（{n} 个 MIG 切片）</translation>
    </message>
    <message>
        <source>reconnecting: {reason}</source>
        <translation>重连中：{reason}</translation>
    </message>
    <message>
        <source>waiting for data</source>
        <translation>等待数据</translation>
    </message>
    <message>
        <source>no data for {n} s</source>
        <translation>{n} 秒无数据</translation>
    </message>
    <message>
        <source>{note} GPU {n}</source>
        <translation>{note} GPU {n}</translation>
    </message>
    <message>
        <source> GPU {n}</source>
        <translation> GPU {n}</translation>
    </message>
    <message>
        <source>energy, throttle time and HBM temperature</source>
        <translation>能耗、降频时间和 HBM 温度</translation>
    </message>
    <message>
        <source>energy and throttle time</source>
        <translation>能耗和降频时间</translation>
    </message>
    <message>
        <source>PCIe link, link states and error counters</source>
        <translation>PCIe 链路、链路状态和错误计数</translation>
    </message>
    <message>
        <source>ECC, row remapping and NVLink error totals</source>
        <translation>ECC、行重映射和 NVLink 错误总数</translation>
    </message>
    <message>
        <source>per-link NVLink traffic</source>
        <translation>逐条 NVLink 链路流量</translation>
    </message>
    <message>
        <source>per-process GPU use</source>
        <translation>各进程的 GPU 占用</translation>
    </message>
    <message>
        <source>PCIe and NVLink throughput</source>
        <translation>PCIe 与 NVLink 吞吐量</translation>
    </message>
    <message>
        <source>The sampler uses {used} % of one CPU core here (its budget: {budget} %).</source>
        <translation>采样器在此主机上占用一个 CPU 核心的 {used} %（预算：{budget} %）。</translation>
    </message>
    <message>
        <source>The sampler is still timing its reads here against its budget ({budget} % of one CPU core).</source>
        <translation>采样器仍在此主机上按预算（一个 CPU 核心的 {budget} %）测量其读取开销。</translation>
    </message>
    <message>
        <source>{what} every {t} s</source>
        <translation>{what}每 {t} 秒一次</translation>
    </message>
    <message>
        <source>To stay within it, it reads {list}.</source>
        <translation>为不超出预算，它读取：{list}。</translation>
    </message>
    <message>
        <source>The machine answers but has no usable NVIDIA GPU (no driver loaded, or none the driver sees): it is billed for nothing. Ask the provider, or move to another instance.</source>
        <translation>机器可以连接，但没有可用的 NVIDIA GPU（驱动未加载，或驱动看不到 GPU）：你在为空机付费。请联系服务商，或换一台实例。</translation>
    </message>
    <message>
        <source>The NVIDIA driver is there but NVML does not start. Run nvidia-smi on the host: a driver/library version mismatch needs a reboot; no permission needs root.</source>
        <translation>NVIDIA 驱动存在，但 NVML 无法启动。请在主机上运行 nvidia-smi：驱动与库版本不匹配需要重启；没有权限需要 root。</translation>
    </message>
</context>
<context>
    <name>Tab</name>
    <message>
        <source>not reported by this GPU</source>
        <translation>此 GPU 未报告</translation>
    </message>
    <message>
        <source>waiting for data…</source>
        <translation>等待数据…</translation>
    </message>
    <message>
        <source>GPU {n}</source>
        <translation>GPU {n}</translation>
    </message>
</context>
<context>
    <name>Tabs</name>
    <message>
        <source>Clocks &amp;&amp; throttling</source>
        <translation>频率与降频</translation>
    </message>
    <message>
        <source>Cost</source>
        <translation>费用</translation>
    </message>
    <message>
        <source>Interconnect</source>
        <translation>互连</translation>
    </message>
    <message>
        <source>Memory &amp;&amp; processes</source>
        <translation>显存与进程</translation>
    </message>
    <message>
        <source>Overview</source>
        <translation>总览</translation>
    </message>
    <message>
        <source>Thermal &amp;&amp; power</source>
        <translation>温度与功耗</translation>
    </message>
    <message>
        <source>Compute</source>
        <translation>算力</translation>
    </message>
</context>
<context>
    <name>ThermalTab</name>
    <message>
        <source>GPU bright, memory dark (°C)</source>
        <translation>GPU 亮色、显存暗色 (°C)</translation>
    </message>
    <message>
        <source>power (W)</source>
        <translation>功耗 (W)</translation>
    </message>
    <message>
        <source>GPU {n} mem</source>
        <translation>GPU {n} 显存</translation>
    </message>
    <message>
        <source>these GPUs</source>
        <translation>这些 GPU</translation>
    </message>
    <message>
        <source>GPU {list}</source>
        <translation>GPU {list}</translation>
    </message>
    <message>
        <source>memory temperature: not reported by {which}</source>
        <translation>显存温度：{which} 未报告</translation>
    </message>
    <message>
        <source>slowdown {value}</source>
        <translation>降频 {value}</translation>
    </message>
    <message>
        <source>shutdown {value}</source>
        <translation>关机 {value}</translation>
    </message>
    <message>
        <source>memory limit {value}</source>
        <translation>显存上限 {value}</translation>
    </message>
    <message>
        <source>GPU temperature</source>
        <translation>GPU 温度</translation>
    </message>
    <message>
        <source>cap (all GPUs)</source>
        <translation>功耗上限（所有 GPU）</translation>
    </message>
    <message>
        <source> cap</source>
        <translation> 上限</translation>
    </message>
    <message>
        <source>default limit {value}</source>
        <translation>默认上限 {value}</translation>
    </message>
    <message>
        <source>power draw</source>
        <translation>功耗</translation>
    </message>
    <message>
        <source>(mem {temp}) · {power} of {cap}</source>
        <translation>（显存 {temp}）· {power} / {cap}</translation>
    </message>
</context>
<context>
    <name>Throughput</name>
    <message>
        <source>{what}: 1 value per {s} s on this host (the sampler reads the byte counters that often to stay within its CPU budget); each step is the mean over those {s} s.</source>
        <translation>{what}：此主机上每 {s} 秒一个值（采样器按此频率读取字节计数器，以守住它的 CPU 预算）；每一级台阶是这 {s} 秒内的平均值。</translation>
    </message>
</context>
<context>
    <name>Tray</name>
    <message>
        <source>Hosts</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>Show gpufleet</source>
        <translation>显示 gpufleet</translation>
    </message>
    <message>
        <source>Pause notifications</source>
        <translation>暂停通知</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>退出</translation>
    </message>
    <message>
        <source>gpufleet: all hosts healthy</source>
        <translation>gpufleet：所有主机正常</translation>
    </message>
</context>
<context>
    <name>Units</name>
    <message>
        <source>{n} s</source>
        <translation>{n} 秒</translation>
    </message>
    <message>
        <source>{n} min</source>
        <translation>{n} 分钟</translation>
    </message>
    <message>
        <source>{h} h {m} min</source>
        <translation>{h} 小时 {m} 分钟</translation>
    </message>
    <message>
        <source>{d} days {h} h</source>
        <translation>{d} 天 {h} 小时</translation>
    </message>
</context>
<context>
    <name>WatchdogDialog</name>
    <message>
        <source>Watchdog on {host}</source>
        <translation>{host} 上的看门狗</translation>
    </message>
    <message>
        <source>Armed, the sampler on the instance watches for idleness itself (all GPUs under 5 % utilization and 10 % memory), warns, waits the grace period, then acts once, also while this laptop sleeps.</source>
        <translation>启用后，实例上的采样程序会自行监测空闲（所有 GPU 利用率低于 5 % 且显存低于 10 %），先发出警告，等待宽限期，然后执行一次操作；笔记本休眠时也照常工作。</translation>
    </message>
    <message>
        <source>for the command action, e.g. /root/stop.sh</source>
        <translation>用于命令操作，例如 /root/stop.sh</translation>
    </message>
    <message>
        <source> min</source>
        <translation> 分钟</translation>
    </message>
    <message>
        <source>only record what it would do</source>
        <translation>只记录将要做什么</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>操作</translation>
    </message>
    <message>
        <source>Command</source>
        <translation>命令</translation>
    </message>
    <message>
        <source>Idle for</source>
        <translation>空闲时长</translation>
    </message>
    <message>
        <source>Grace period</source>
        <translation>宽限期</translation>
    </message>
    <message>
        <source>Dry run</source>
        <translation>演练</translation>
    </message>
    <message>
        <source>asking the instance…</source>
        <translation>正在询问实例…</translation>
    </message>
    <message>
        <source>Arm</source>
        <translation>启用</translation>
    </message>
    <message>
        <source>Cancel pending action</source>
        <translation>取消待执行的操作</translation>
    </message>
    <message>
        <source>Disarm</source>
        <translation>停用</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
</context>
<context>
    <name>Xid</name>
    <message>
        <source>graphics engine exception (usually the application)</source>
        <translation>图形引擎异常（通常是应用程序问题）</translation>
    </message>
    <message>
        <source>GPU memory page fault (usually the application)</source>
        <translation>GPU 显存页错误（通常是应用程序问题）</translation>
    </message>
    <message>
        <source>GPU stopped processing (usually the application)</source>
        <translation>GPU 停止处理（通常是应用程序问题）</translation>
    </message>
    <message>
        <source>preemptive cleanup: a process was killed</source>
        <translation>抢占式清理：有进程被结束</translation>
    </message>
    <message>
        <source>double-bit (uncorrectable) ECC error</source>
        <translation>双比特（不可纠正）ECC 错误</translation>
    </message>
    <message>
        <source>internal micro-controller breakpoint</source>
        <translation>内部微控制器断点</translation>
    </message>
    <message>
        <source>internal micro-controller halt</source>
        <translation>内部微控制器停机</translation>
    </message>
    <message>
        <source>ECC page retirement or row remapping recorded</source>
        <translation>已记录 ECC 页退役或行重映射</translation>
    </message>
    <message>
        <source>ECC page retirement or row remapping failed</source>
        <translation>ECC 页退役或行重映射失败</translation>
    </message>
    <message>
        <source>video decoder exception</source>
        <translation>视频解码器异常</translation>
    </message>
    <message>
        <source>NVLink error</source>
        <translation>NVLink 错误</translation>
    </message>
    <message>
        <source>GPU has fallen off the bus</source>
        <translation>GPU 从总线掉线（掉卡）</translation>
    </message>
    <message>
        <source>high single-bit ECC error rate</source>
        <translation>单比特 ECC 错误率过高</translation>
    </message>
    <message>
        <source>contained ECC error</source>
        <translation>已隔离的 ECC 错误</translation>
    </message>
    <message>
        <source>uncontained ECC error</source>
        <translation>未隔离的 ECC 错误</translation>
    </message>
    <message>
        <source>context switch timeout</source>
        <translation>上下文切换超时</translation>
    </message>
    <message>
        <source>GSP RPC timeout</source>
        <translation>GSP RPC 超时</translation>
    </message>
    <message>
        <source>GSP error</source>
        <translation>GSP 错误</translation>
    </message>
    <message>
        <source>C2C link error</source>
        <translation>C2C 链路错误</translation>
    </message>
    <message>
        <source>unrecovered ECC error</source>
        <translation>未恢复的 ECC 错误</translation>
    </message>
    <message>
        <source>GPU initialization failure</source>
        <translation>GPU 初始化失败</translation>
    </message>
    <message>
        <source>GPU recovery action required</source>
        <translation>需要执行 GPU 恢复操作</translation>
    </message>
    <message>
        <source>Xid {code}</source>
        <translation>Xid {code}</translation>
    </message>
</context>
<context>
    <name>dialog</name>
    <message>
        <source>Done. The result is kept in the history with the host.</source>
        <translation>完成。结果已随该主机保存在历史记录中。</translation>
    </message>
</context>
</TS>
