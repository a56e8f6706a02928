/* The static parts of report.html: style and the renderer script (plain DOM + SVG, no
 * library, nothing loaded from the network). The script reads the DATA object the
 * exporter writes before it. Every op is its own span in DATA and is drawn as its own rect
 * while the view holds up to LOD_MAX (20000) spans; past that, level of detail: spans under
 * a pixel that touch one block are drawn as that block (class "lod", data-n ops); zoom (buttons, wheel at the pointer, #t=US0,US1 in the URL)
 * and pan (drag) redraw the timeline and the memory charts, which share the time axis.
 * #render-stats (hidden) carries the figures the tests read. */
#ifndef HWRT_REPORT_PAGE_H
#define HWRT_REPORT_PAGE_H

#define REPORT_CSS \
"body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222}" \
"h1{font-size:20px}h2{font-size:16px;margin-top:24px}" \
"#verdict{border-left:4px solid #c33;background:#fdf3f3;padding:8px 12px}" \
"#verdict .headline{font-weight:600}" \
"table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}" \
"td.name,th.name{text-align:left}.bar{height:10px;background:#4e79a7}" \
".lane-label{font-size:11px;fill:#333}.group-label{font-size:12px;font-weight:600;fill:#000}" \
".legend span{display:inline-block;margin-right:12px}.legend i{display:inline-block;width:10px;" \
"height:10px;margin-right:4px}" \
".zoombar{margin:6px 0}.zoombar button{margin-right:6px}.zoombar .hint{color:#777}" \
"#timeline-svg,.mem-chart{cursor:grab;user-select:none}.lod{opacity:.85}" \
"#render-stats{display:none}"

#define REPORT_JS \
"(function(){\n" \
"const CATS=['kernel','MemcpyHtoD','MemcpyDtoH','MemcpyDtoD','Memset','host callback','stream wait','launch','sync','offload'];\n" \
"const COLORS=['#4e79a7','#f28e2b','#e15759','#76b7b2','#59a14f','#edc948','#bab0ac','#9c755f','#ff9da7','#b07aa1'];\n" \
"const NS='http://www.w3.org/2000/svg';\n" \
"function el(tag,attrs,parent,text){const e=document.createElementNS(NS,tag);\n" \
" for(const k in attrs)e.setAttribute(k,attrs[k]);if(text!==undefined)e.textContent=text;\n" \
" if(parent)parent.appendChild(e);return e;}\n" \
"function h(tag,text,parent,cls){const e=document.createElement(tag);if(text!==undefined)e.textContent=text;\n" \
" if(cls)e.className=cls;if(parent)parent.appendChild(e);return e;}\n" \
"function fmt(us){const a=Math.abs(us);return a>=1e6?(us/1e6).toFixed(3)+' s':a>=1000?(us/1000).toFixed(2)+' ms':us.toFixed(1)+' us';}\n" \
"const S=DATA.stats;\n" \
"h('p','processes '+S.processes+' | events '+S.events+' | dropped '+S.dropped+' | launches '+S.launches+\n" \
"  ' | syncs '+S.syncs+' | device time '+S.device_ms.toFixed(3)+' ms (Memcpy '+S.memcpy_ms.toFixed(3)+\n" \
"  ' ms, kernels '+S.kernel_ms.toFixed(3)+' ms) | device idle '+S.idle_ms.toFixed(3)+' of '+S.span_ms.toFixed(3)+\n" \
"  ' ms | peak allocated '+S.peak_allocated_mb.toFixed(2)+' MB',document.getElementById('meta'));\n" \
"const V=document.getElementById('verdict');h('div','Verdict: '+DATA.verdict.headline,V,'headline');\n" \
"const ul=h('ul',undefined,V);for(const l of DATA.verdict.lines)h('li',l,ul,'advice');\n" \
"let T0=Infinity,T1=-Infinity,total=0;\n" \
"for(const L of DATA.lanes){total+=L.spans.length;for(const s of L.spans){if(s[0]<T0)T0=s[0];if(s[0]+s[1]>T1)T1=s[0]+s[1];}}\n" \
"for(const M of DATA.mem)for(const p of M.pts){if(p[0]<T0)T0=p[0];if(p[0]>T1)T1=p[0];}\n" \
"if(!(T1>T0)){T0=0;T1=1;}\n" \
"const pad=(T1-T0)*0.01;T0-=pad;T1+=pad;\n" \
"let v0=T0,v1=T1;\n" \
"const m=/#t=([-0-9.e]+),([-0-9.e]+)/.exec(location.hash);\n" \
"if(m&&+m[2]>+m[1]){v0=+m[1];v1=+m[2];}\n" \
"const W=1200,LW=300,RM=40,LH=18,PW=W-LW-RM,LOD_MAX=20000;\n" \
"function x(t){return LW+(t-v0)/(v1-v0)*PW;}\n" \
"function tAt(px){return v0+(px-LW)/PW*(v1-v0);}\n" \
"function nice(step){const p=Math.pow(10,Math.floor(Math.log10(step)));const f=step/p;return (f<=1?1:f<=2?2:f<=5?5:10)*p;}\n" \
"function ticks(){const st=nice((v1-v0)/10);const out=[];for(let t=Math.ceil(v0/st)*st;t<=v1;t+=st)out.push(t);return out;}\n" \
"function axis(svg,y0,y1,ly){for(const t of ticks()){const X=x(t);\n" \
" el('line',{x1:X,x2:X,y1:y0,y2:y1,stroke:'#eee'},svg);\n" \
" el('text',{x:X,y:ly,'font-size':10,'text-anchor':X>W-RM-30?'end':X<LW+30?'start':'middle',class:'tick'},svg,fmt(t));}}\n" \
"const TL=document.getElementById('timeline');\n" \
"const leg=h('div',undefined,TL,'legend');CATS.forEach((c,i)=>{const s=h('span',undefined,leg);\n" \
" const b=h('i',undefined,s);b.style.background=COLORS[i];s.appendChild(document.createTextNode(c));});\n" \
"const bar=h('div',undefined,TL,'zoombar');\n" \
"const bin=h('button','zoom in',bar);const bout=h('button','zoom out',bar);const brs=h('button','reset',bar);\n" \
"const vlab=h('span','',bar,'view');\n" \
"h('span',' (wheel: zoom at the pointer, drag: pan, double-click: reset)',bar,'hint');\n" \
"let rows=0,prevGroup=null;for(const L of DATA.lanes){if(L.group!==prevGroup){rows++;prevGroup=L.group;}rows++;}\n" \
"const svg=el('svg',{width:W,height:(rows+2)*LH,id:'timeline-svg'},TL);\n" \
"const MEM=document.getElementById('memory');const mcharts=[];\n" \
"for(const M of DATA.mem){h('div',M.name+' (MB, allocated solid, reserved dashed)',MEM);\n" \
" const H=160;const ms=el('svg',{width:W,height:H+26,class:'mem-chart'},MEM);mcharts.push([M,ms,H]);}\n" \
"if(!DATA.mem.length)h('p','no device memory events were recorded',MEM);\n" \
"const RS=document.getElementById('render-stats');\n" \
"function drawTimeline(){\n" \
" while(svg.firstChild)svg.removeChild(svg.firstChild);\n" \
" axis(svg,0,(rows+1)*LH,(rows+1.8)*LH);\n" \
" let y=0,drawn=0,lod=0,visible=0,titles=0;prevGroup=null;\n" \
" const px=(v1-v0)/PW;let inview=0;\n" \
" for(const L of DATA.lanes)for(const s of L.spans)if(!(s[0]+s[1]<v0||s[0]>v1))inview++;\n" \
" const useLod=inview>LOD_MAX;\n" \
" for(const L of DATA.lanes){\n" \
"  if(L.group!==prevGroup){el('text',{x:4,y:y+13,class:'group-label'},svg,L.group);y+=LH;prevGroup=L.group;}\n" \
"  const g=el('g',{class:'lane','data-lane':L.group+' / '+L.name,'data-kind':L.kind,'data-spans':L.spans.length},svg);\n" \
"  el('text',{x:14,y:y+13,class:'lane-label'},g,L.name);\n" \
"  let bs=0,be=-1,bn=0,bc=0,bi=-1;\n" \
"  function flush(){if(bn===0)return;const X0=Math.max(LW,x(bs)),X1=Math.min(W-RM,x(be));\n" \
"   const r=el('rect',{x:X0.toFixed(2),y:y+2,width:Math.max(1,X1-X0).toFixed(2),height:LH-4,fill:COLORS[bc],\n" \
"    class:bn>1?'span lod':'span','data-cat':CATS[bc],'data-n':bn},g);\n" \
"   if(titles<4000){const s=L.spans[bi];el('title',{},r,bn>1?bn+' ops ('+fmt(bs)+' .. '+fmt(be)+'), zoom in to see each':\n" \
"    DATA.names[s[2]]+' '+fmt(s[1])+' at '+fmt(s[0]));titles++;}\n" \
"   drawn++;if(bn>1)lod++;bn=0;}\n" \
"  for(let i=0;i<L.spans.length;i++){const s=L.spans[i];const a=s[0],b=s[0]+s[1];\n" \
"   if(b<v0||a>v1)continue;visible++;\n" \
"   /* level of detail, only past LOD_MAX spans in view: spans under a pixel that touch\n" \
"      the block in hand join it */\n" \
"   if(useLod&&bn&&s[1]<px&&a<=be+px){if(b>be)be=b;bn++;continue;}\n" \
"   flush();bs=a;be=b;bn=1;bc=s[3];bi=i;}\n" \
"  flush();y+=LH;}\n" \
" vlab.textContent=' view '+fmt(v0)+' .. '+fmt(v1)+' ('+visible+' spans in view, '+drawn+' drawn)';\n" \
" return [drawn,lod,visible];}\n" \
"function drawMemory(){let mpts=0;\n" \
" for(const [M,ms,H] of mcharts){while(ms.firstChild)ms.removeChild(ms.firstChild);\n" \
"  let mx=0;for(const p of M.pts)mx=Math.max(mx,p[1],p[2]);if(mx<=0)mx=1;\n" \
"  function yy(v){return 5+H-(v/mx)*H;}\n" \
"  axis(ms,5,H+5,H+18);\n" \
"  for(const f of [0,0.5,1]){el('line',{x1:LW,x2:W-RM,y1:yy(mx*f),y2:yy(mx*f),stroke:'#f3f3f3'},ms);\n" \
"   el('text',{x:LW-4,y:yy(mx*f)+4,'font-size':10,'text-anchor':'end',class:'mb'},ms,(mx*f).toFixed(f?2:0)+' MB');}\n" \
"  function path(i){let d='';let last=null;for(const p of M.pts){const X=Math.min(W-RM,Math.max(LW,x(p[0]))).toFixed(1);\n" \
"   if(last===null)d+='M'+X+','+yy(p[i]).toFixed(1);else d+=' L'+X+','+yy(last).toFixed(1)+' L'+X+','+yy(p[i]).toFixed(1);last=p[i];}\n" \
"   if(last!==null)d+=' L'+(W-RM)+','+yy(last).toFixed(1);return d;}\n" \
"  el('path',{d:path(1),fill:'none',stroke:'#4e79a7','stroke-width':1.5,class:'mem-curve','data-points':M.pts.length},ms);\n" \
"  el('path',{d:path(2),fill:'none',stroke:'#e15759','stroke-dasharray':'4 2',class:'mem-reserved'},ms);\n" \
"  el('text',{x:4,y:14,'font-size':10},ms,'peak '+mx.toFixed(2)+' MB');mpts+=M.pts.length;}\n" \
" return mpts;}\n" \
"function render(){const [drawn,lod,visible]=drawTimeline();const mpts=drawMemory();\n" \
" RS.textContent='rendered lanes='+DATA.lanes.length+' spans='+total+' drawn='+drawn+' mem_points='+mpts+' ops='+DATA.ops.length;\n" \
" RS.dataset.lanes=DATA.lanes.length;RS.dataset.spans=total;RS.dataset.visible=visible;RS.dataset.drawn=drawn;\n" \
" RS.dataset.lod=lod;RS.dataset.memPoints=mpts;RS.dataset.ops=DATA.ops.length;\n" \
" RS.dataset.view=v0+','+v1;}\n" \
"function zoom(f,at){const c=at===undefined?(v0+v1)/2:at;let a=c-(c-v0)*f,b=c+(v1-c)*f;\n" \
" if(b-a<1e-3)return;if(f>1&&b-a>=T1-T0){a=T0;b=T1;}v0=a;v1=b;render();}\n" \
"bin.onclick=()=>zoom(0.5);bout.onclick=()=>zoom(2);brs.onclick=()=>{v0=T0;v1=T1;render();};\n" \
"function onWheel(ev){ev.preventDefault();const r=ev.currentTarget.getBoundingClientRect();\n" \
" const t=tAt(ev.clientX-r.left);zoom(ev.deltaY<0?0.8:1.25,Math.min(v1,Math.max(v0,t)));}\n" \
"let drag=null;\n" \
"function onDown(ev){drag=[ev.clientX,v0,v1];}\n" \
"function onMove(ev){if(!drag)return;const dt=(ev.clientX-drag[0])/PW*(drag[2]-drag[1]);\n" \
" v0=drag[1]-dt;v1=drag[2]-dt;render();}\n" \
"for(const s of [svg].concat(mcharts.map(c=>c[1]))){s.addEventListener('wheel',onWheel,{passive:false});\n" \
" s.addEventListener('mousedown',onDown);s.addEventListener('dblclick',()=>{v0=T0;v1=T1;render();});}\n" \
"window.addEventListener('mousemove',onMove);window.addEventListener('mouseup',()=>{drag=null;});\n" \
"render();\n" \
"const OPS=document.getElementById('ops');const tb=h('table',undefined,OPS);tb.id='op-table';\n" \
"const hr=h('tr',undefined,tb);['time(%)','','total(us)','count','avg(us)','min(us)','max(us)','device','task type','op_name'].forEach((c,i)=>h('th',c,hr,i==9?'name':''));\n" \
"for(const o of DATA.ops){const r=h('tr',undefined,tb,'op-row');r.dataset.op=o.name;\n" \
" h('td',o.pct.toFixed(2),r);const bc=h('td',undefined,r);const b=h('div',undefined,bc,'bar');b.style.width=(o.pct*2)+'px';\n" \
" [o.total.toFixed(3),o.count,o.avg.toFixed(3),o.min.toFixed(3),o.max.toFixed(3),o.device,o.type].forEach(v=>h('td',String(v),r));\n" \
" h('td',o.name,r,'name');}\n" \
"document.body.setAttribute('data-rendered','1');\n" \
"})();\n"

#endif
